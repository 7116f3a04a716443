/**
 * The kube-proxy releases kpc reproduces, and which one a run means. Each release's behaviour
 * differences are data (behaviour.ts, feature-gates.ts), read by the stages that need them,
 * never copies of an emitter.
 */

export const KUBE_PROXY_RELEASES = ['1.34', '1.35', '1.36', '1.37'] as const;
export type KubeProxyRelease = (typeof KUBE_PROXY_RELEASES)[number];

/** The default: the newest supported release. */
export const NEWEST_RELEASE: KubeProxyRelease = '1.37';

/** The patch release each was checked against (the oracle's k8s.io/kubernetes module). */
export const CHECKED_PATCH: Record<KubeProxyRelease, string> = {
  '1.34': 'v1.34.4',
  '1.35': 'v1.35.4',
  '1.36': 'v1.36.3',
  '1.37': 'v1.37.2',
};

export function isRelease(text: string): text is KubeProxyRelease {
  return (KUBE_PROXY_RELEASES as readonly string[]).includes(text);
}

/** The release named by `1.36`, `v1.36` or `v1.36.3` (any patch of a supported minor). */
export function parseRelease(text: string): KubeProxyRelease | undefined {
  const m = /^v?(1\.\d+)(?:\.\d+)?$/.exec(text.trim());
  return m && isRelease(m[1]!) ? m[1] : undefined;
}

/** release ≥ since, by minor version. */
export function atLeast(release: KubeProxyRelease, since: KubeProxyRelease): boolean {
  return KUBE_PROXY_RELEASES.indexOf(release) >= KUBE_PROXY_RELEASES.indexOf(since);
}
