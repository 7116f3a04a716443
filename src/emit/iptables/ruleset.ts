/**
 * The rules of one iptables-restore input, held per table and chain before printing.
 *
 * Chains are kept in declaration order and rules in append order; the printer puts them
 * in kpc's canonical order. A rule is its full restore line (`-A CHAIN ...`): that is the
 * unit kube-proxy writes and the unit later compared, so there is nothing to gain from
 * keeping tokens apart.
 */

export type TableName = 'filter' | 'nat';

export const BUILTIN_CHAINS: ReadonlySet<string> = new Set(['INPUT', 'FORWARD', 'OUTPUT', 'PREROUTING', 'POSTROUTING']);

export class Table {
  /** Chain name → its rule lines. A declared chain with no rules has an empty list. */
  readonly chains = new Map<string, string[]>();

  constructor(readonly name: TableName) {}

  declare(chain: string): string[] {
    let rules = this.chains.get(chain);
    if (!rules) {
      rules = [];
      this.chains.set(chain, rules);
    }
    return rules;
  }

  /** Append `-A chain args`; the chain must have been declared. */
  append(chain: string, args: string): void {
    const rules = this.chains.get(chain);
    if (!rules) throw new Error(`internal error: rule for undeclared chain ${chain} in table ${this.name}`);
    rules.push(`-A ${chain} ${args}`);
  }
}

export interface Ruleset {
  filter: Table;
  nat: Table;
}

export function newRuleset(): Ruleset {
  return { filter: new Table('filter'), nat: new Table('nat') };
}
