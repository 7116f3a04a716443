/** kpc's version, and the kube-proxy releases whose behaviour it reproduces. */
import { CHECKED_PATCH, KUBE_PROXY_RELEASES, NEWEST_RELEASE } from '../releases/index.js';

export const KPC_VERSION = '0.2.0';

/** `kpc --version`: kpc's version, then each release with the patch it was checked against. */
export function versionText(): string {
  const releases = KUBE_PROXY_RELEASES.map((r) => `  ${r}  (checked against kube-proxy ${CHECKED_PATCH[r]})${r === NEWEST_RELEASE ? '  default' : ''}`);
  return [`kpc ${KPC_VERSION}`, 'kube-proxy releases (--kube-proxy-version):', ...releases].join('\n');
}
