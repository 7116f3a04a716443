/**
 * Reading a previous IPVS-mode state from disk (`--previous PATH`, `--golden PATH`):
 *
 *   - a directory holding the four parts under their bundle names: kpc's own `-o DIR` output,
 *     or a node's state captured with
 *         ipvsadm-save -n                  > DIR/ipvs.rules
 *         ipset save                       > DIR/ipset.rules
 *         iptables-save                    > DIR/iptables.rules     (ip6tables-save for IPv6)
 *         ip -o addr show dev kube-ipvs0   > DIR/kube-ipvs0.addrs
 *   - a file: the apply.sh kpc prints without -o, whose here-documents hold the four parts.
 *
 * A delta bundle (`kpc compile --previous … -o DIR`) describes changes, not a state: its
 * apply.sh carries DELTA_MARKER and is refused.
 */

import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { HEREDOC_TERMINATORS } from '../../emit/ipvs/apply-script.js';
import { BUNDLE_FILES, type IpvsBundle } from '../../emit/ipvs/bundle.js';
import { KpcError } from '../../errors.js';

/** A line in every delta apply.sh kpc writes. */
export const DELTA_MARKER = '# kpc-bundle: delta';

export const PARTS: readonly (keyof IpvsBundle)[] = ['ipvsRules', 'ipsetRules', 'iptablesRules', 'addresses'];

/** A previous state that cannot be read as a bundle. */
export function bundleReadError(message: string): KpcError {
  return new KpcError('input', 'previous.unreadable', message);
}

export const CAPTURE_HINT =
  'a kpc bundle directory (-o DIR) or its apply.sh, or a node\'s state: ipvsadm-save -n > DIR/ipvs.rules; ipset save > DIR/ipset.rules; ' +
  'iptables-save > DIR/iptables.rules; ip -o addr show dev kube-ipvs0 > DIR/kube-ipvs0.addrs';

function read(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw bundleReadError(`${path}: cannot read: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
}

function refuseDelta(script: string, where: string): void {
  if (script.split('\n').includes(DELTA_MARKER)) {
    throw bundleReadError(`${where} is a delta bundle (kpc compile --previous): it holds changes, not a state; give the full bundle or the node's state`);
  }
}

/** The four parts embedded in an inline apply.sh, or undefined when the text is not one. */
export function extractInlineBundle(script: string): IpvsBundle | undefined {
  const out: Partial<IpvsBundle> = {};
  for (const part of PARTS) {
    const term = HEREDOC_TERMINATORS[part];
    const head = `cat > "$dir/${BUNDLE_FILES[part]}" <<'${term}'\n`;
    const start = script.indexOf(head);
    if (start < 0) return undefined;
    const body = start + head.length;
    const end = script.startsWith(`${term}\n`, body) ? body : script.indexOf(`\n${term}\n`, body);
    if (end < 0) return undefined;
    out[part] = end === body ? '' : script.slice(body, end + 1);
  }
  return out as IpvsBundle;
}

/** The four parts of the apply.sh kpc prints without -o (`where` names it in messages). */
export function bundleFromScript(script: string, where: string): IpvsBundle {
  refuseDelta(script, where);
  const inline = extractInlineBundle(script);
  if (!inline) throw bundleReadError(`${where} is neither a directory nor an apply.sh that kpc printed; give ${CAPTURE_HINT}`);
  return inline;
}

/** The four parts of a previous state at `path` (see the file comment). */
export function readBundleTexts(path: string): IpvsBundle {
  let isDir: boolean;
  try {
    isDir = statSync(path).isDirectory();
  } catch (e) {
    throw bundleReadError(`${path}: cannot read: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  if (!isDir) return bundleFromScript(read(path), path);
  const script = join(path, BUNDLE_FILES.applyScript);
  if (existsSync(script)) refuseDelta(read(script), script);
  const missing = PARTS.filter((p) => !existsSync(join(path, BUNDLE_FILES[p])));
  if (missing.length > 0) {
    throw bundleReadError(`${path} has no ${missing.map((p) => BUNDLE_FILES[p]).join(', ')}; give ${CAPTURE_HINT}`);
  }
  return {
    ipvsRules: read(join(path, BUNDLE_FILES.ipvsRules)),
    ipsetRules: read(join(path, BUNDLE_FILES.ipsetRules)),
    iptablesRules: read(join(path, BUNDLE_FILES.iptablesRules)),
    addresses: read(join(path, BUNDLE_FILES.addresses)),
  };
}
