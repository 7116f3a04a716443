/**
 * Go's time.ParseDuration and Duration.String(), for metav1.Duration fields of the
 * KubeProxyConfiguration (`syncPeriod: 30s`). Values are nanoseconds in a JS number, exact up to
 * about 104 days, which covers every kube-proxy setting.
 */

const UNITS: Record<string, number> = {
  ns: 1,
  us: 1e3,
  'µs': 1e3, // U+00B5 micro sign
  'μs': 1e3, // U+03BC Greek mu
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

/** time's own quote(): ASCII kept (with `"` and backslash escaped), other bytes as \xNN. */
function timeQuote(text: string): string {
  let out = '"';
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    if (c >= 0x80 || c < 0x20) {
      for (const b of Buffer.from(ch, 'utf8')) out += `\\x${b.toString(16).padStart(2, '0')}`;
    } else {
      out += ch === '"' || ch === '\\' ? `\\${ch}` : ch;
    }
  }
  return `${out}"`;
}

/** Nanoseconds, or the error text Go's ParseDuration returns. */
export function parseGoDuration(text: string): { ns: number } | { error: string } {
  const quoted = timeQuote(text);
  const invalid = { error: `time: invalid duration ${quoted}` };
  let s = text;
  let neg = false;
  if (s.startsWith('-') || s.startsWith('+')) {
    neg = s.startsWith('-');
    s = s.slice(1);
  }
  if (s === '0') return { ns: 0 };
  if (s === '') return invalid;
  let total = 0;
  while (s !== '') {
    const num = /^(\d*)(\.(\d*))?/.exec(s)!;
    const whole = num[1] ?? '';
    const frac = num[3] ?? '';
    if (whole === '' && frac === '') return invalid;
    s = s.slice(num[0].length);
    const unitMatch = /^[^0-9.]+/.exec(s);
    if (!unitMatch) return { error: `time: missing unit in duration ${quoted}` };
    const unit = unitMatch[0];
    const scale = UNITS[unit];
    if (scale === undefined) return { error: `time: unknown unit ${timeQuote(unit)} in duration ${quoted}` };
    s = s.slice(unit.length);
    total += Number(whole === '' ? '0' : whole) * scale + (frac === '' ? 0 : Number(`0.${frac}`) * scale);
  }
  return { ns: Math.round(neg ? -total : total) };
}

/** The digits of v/10^prec with trailing zeros (and a bare point) removed: Go's fmtFrac. */
function frac(v: number, prec: number): { rest: number; text: string } {
  let digits = '';
  let print = false;
  let rest = v;
  for (let i = 0; i < prec; i++) {
    const digit = rest % 10;
    print = print || digit !== 0;
    if (print) digits = `${digit}${digits}`;
    rest = Math.floor(rest / 10);
  }
  return { rest, text: print ? `.${digits}` : '' };
}

/** Go's Duration.String(): `1h0m0s`, `30s`, `1.5s`, `250ms`, `0s`. */
export function formatGoDuration(ns: number): string {
  if (ns === 0) return '0s';
  const neg = ns < 0;
  let u = Math.abs(ns);
  let out: string;
  if (u < 1e9) {
    if (u < 1e3) out = `${u}ns`;
    else if (u < 1e6) {
      const f = frac(u, 3);
      out = `${f.rest}${f.text}µs`;
    } else {
      const f = frac(u, 6);
      out = `${f.rest}${f.text}ms`;
    }
  } else {
    const f = frac(u, 9);
    u = f.rest;
    let text = `${u % 60}${f.text}s`;
    u = Math.floor(u / 60);
    if (u > 0) {
      text = `${u % 60}m${text}`;
      u = Math.floor(u / 60);
      if (u > 0) text = `${u}h${text}`;
    }
    out = text;
  }
  return neg ? `-${out}` : out;
}
