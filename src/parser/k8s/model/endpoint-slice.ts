/** discovery.EndpointSlice as the API server's defaulting and validation see it. */

import type { CoreObjectMeta, TypeMeta } from './meta.js';

export interface CoreEndpoint {
  addresses: string[];
  conditions: { ready?: boolean; serving?: boolean; terminating?: boolean };
  hostname?: string;
  nodeName?: string;
  zone?: string;
  hints?: { forZones: Array<{ name: string }>; forNodes: Array<{ name: string }> };
}

export interface CoreEndpointPort {
  /** nil until defaulted to "". */
  name?: string;
  /** nil until defaulted to TCP. */
  protocol?: string;
  /** Never defaulted: a nil port is valid to the API and ignored by kube-proxy. */
  port?: number;
  appProtocol?: string;
}

export interface CoreEndpointSlice extends TypeMeta {
  metadata: CoreObjectMeta;
  addressType: string;
  endpoints: CoreEndpoint[];
  ports: CoreEndpointPort[];
}

/** The label that ties a slice to its Service (discovery.LabelServiceName). */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
/** discovery.LabelManagedBy. */
export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
