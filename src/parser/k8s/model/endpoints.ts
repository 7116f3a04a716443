/** Legacy core.Endpoints as the API server's defaulting and validation see it. */

import type { CoreObjectMeta, TypeMeta } from './meta.js';

export interface CoreEndpointAddress {
  ip: string;
  hostname: string;
  nodeName?: string;
}

export interface CoreEndpointsPort {
  name: string;
  port: number;
  protocol: string;
  appProtocol?: string;
}

export interface CoreEndpointSubset {
  addresses: CoreEndpointAddress[];
  notReadyAddresses: CoreEndpointAddress[];
  ports: CoreEndpointsPort[];
}

export interface CoreEndpoints extends TypeMeta {
  metadata: CoreObjectMeta;
  subsets: CoreEndpointSubset[];
}
