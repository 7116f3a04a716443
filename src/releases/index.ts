export { KUBE_PROXY_RELEASES, NEWEST_RELEASE, CHECKED_PATCH, isRelease, parseRelease, atLeast, type KubeProxyRelease } from './release.js';
export { behaviourOf, type ReleaseBehaviour, type NftablesBehaviour } from './behaviour.js';
export { applyGates, gatesOf, type AppliedGates, type GateSpec, type GateProblem, type GateStage } from './gates.js';
