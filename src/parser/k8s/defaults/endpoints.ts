/** SetDefaults_Endpoints (pkg/apis/core/v1/defaults.go): port protocols default to TCP. */

import type { CoreEndpoints } from '../model/endpoints.js';

export function setEndpointsDefaults(ep: CoreEndpoints): void {
  for (const ss of ep.subsets) for (const p of ss.ports) if (p.protocol === '') p.protocol = 'TCP';
}
