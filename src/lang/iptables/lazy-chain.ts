/**
 * A chain whose appended rules are parsed on first use (read.ts ReadOptions.lazy): `kpc trace`
 * follows a handful of a node's 780,000 rules. All of them are parsed, in order, when `rules`
 * is read; `ruleFor` parses one, and not even that when its text shows it cannot match the
 * packet (the tracer walks KUBE-SERVICES' 27,000 rules to find one Service's).
 */

import type { IP } from '../../net/ip.js';
import type { Chain, Rule, Table } from './model.js';
import type { WaitingLines } from './append-rule.js';
import { excludesDestination } from './destination-screen.js';

export class LazyChain implements Chain {
  /** The appends not yet placed, three numbers each: line number, start and end in the text. */
  waiting: number[] = [];
  /** waiting[0..next) are placed in `parsed`. */
  private next = 0;
  /** Rules of `waiting` parsed out of turn (ruleFor), by their number in it. */
  private early: Array<Rule | undefined> = [];
  private parsed: Rule[] = [];

  constructor(
    readonly table: Table,
    readonly name: string,
    readonly builtin: boolean,
    public policy: string,
    public line: number,
    private readonly lines: WaitingLines,
  ) {}

  get rules(): Rule[] {
    while (this.next < this.waiting.length) this.placeNext();
    return this.parsed;
  }

  set rules(rules: Rule[]) {
    this.waiting = [];
    this.next = 0;
    this.early = [];
    this.parsed = rules;
  }

  /** Its rules, parsed or waiting. */
  get count(): number {
    return this.parsed.length + (this.waiting.length - this.next) / 3;
  }

  /**
   * Rule i (from 0), or undefined when `to` is given and the rule's own `-d` shows a packet to
   * it cannot match (the rule is then not parsed, and its errors and warnings not seen).
   */
  ruleFor(i: number, to?: IP): Rule | undefined {
    if (i < this.parsed.length) return this.parsed[i];
    const w = i - this.parsed.length + this.next / 3;
    const early = this.early[w];
    if (early) return early;
    const start = this.waiting[w * 3 + 1]!;
    const end = this.waiting[w * 3 + 2]!;
    if (to && this.argsExclude(start, end, to)) return undefined;
    const rule = this.lines.rule(this, this.waiting[w * 3]!, start, end);
    rule.index = i + 1;
    this.early[w] = rule;
    return rule;
  }

  /**
   * The next waiting rule parsed and placed at the end (read.ts settles a table's waiting rules
   * in the text's order, so that the first bad line is the one reported).
   */
  placeNext(): void {
    const w = this.next / 3;
    const rule = this.early[w] ?? this.lines.rule(this, this.waiting[this.next]!, this.waiting[this.next + 1]!, this.waiting[this.next + 2]!);
    this.next += 3;
    this.parsed.push(rule);
    rule.index = this.parsed.length;
    if (this.next === this.waiting.length) {
      this.waiting = [];
      this.next = 0;
      this.early = [];
    }
  }

  /** A `-A NAME args` line's args exclude `to` (a line of another form is parsed). */
  private argsExclude(start: number, end: number, to: IP): boolean {
    const text = this.lines.text;
    const args = start + 3 + this.name.length;
    if (!text.startsWith('-A ', start) || !text.startsWith(this.name, start + 3) || text.charCodeAt(args) !== 32) return false;
    return excludesDestination(text.slice(args, end), to);
  }
}
