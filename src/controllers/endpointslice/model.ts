/**
 * The EndpointSlices the controller writes, as kpc derives them: kpc's EndpointSlice (what
 * the IR reads) plus what the controller sets beside it (generateName, the owner reference to
 * the Service, each endpoint's targetRef to its Pod), for `kpc endpointslices` to print.
 */

import type { Endpoint, EndpointPort, EndpointSlice, ObjectMeta } from '../../parser/k8s/types.js';

/** The value of MANAGED_BY_LABEL on the slices this controller writes (ControllerName). */
export const CONTROLLER_NAME = 'endpointslice-controller.k8s.io';

export interface OwnerReference {
  apiVersion: 'v1';
  kind: 'Service';
  name: string;
  /** Absent when the Service in the input has no uid (a hand-written manifest). */
  uid?: string;
  controller: true;
  blockOwnerDeletion: true;
}

export interface TargetRef {
  kind: 'Pod';
  namespace: string;
  name: string;
  uid?: string;
}

export interface DerivedEndpoint extends Endpoint {
  /** podToEndpoint sets all three. */
  conditions: { ready: boolean; serving: boolean; terminating: boolean };
  targetRef: TargetRef;
}

export interface DerivedEndpointPort extends EndpointPort {
  port: number;
}

export interface DerivedEndpointSlice extends EndpointSlice {
  metadata: ObjectMeta & { generateName: string; ownerReferences: OwnerReference[] };
  addressType: 'IPv4' | 'IPv6';
  endpoints: DerivedEndpoint[];
  ports: DerivedEndpointPort[];
}
