/** kpc's version and the kube-proxy release whose behaviour it reproduces. */
export const KPC_VERSION = '0.1.0';
export const KUBE_PROXY_VERSION = 'v1.34';
