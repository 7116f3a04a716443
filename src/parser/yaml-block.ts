/**
 * A hand-written reader for the block YAML that `kubectl get -o yaml` (sigs.k8s.io/yaml),
 * Helm and kustomize print, about four times as fast as js-yaml on it (issue 19).
 *
 * It builds exactly what the fast path (yaml-fast.ts: js-yaml under kpc's SCHEMA, then the
 * cleanliness check) builds — the same values, keys in the same order, the same spans — or it
 * gives up (undefined) and that path decides, as it did before this reader existed. So giving
 * up is always safe; accepting what js-yaml reads differently, or refuses, is the one thing
 * it must never do (test/parser/yaml-block.test.ts compares the two on generated, hand-written,
 * fixture and fuzzed input).
 *
 * What it reads:
 *
 *   stream     documents separated by `---` lines (`---`, optionally followed by a comment);
 *              a document's root is a block mapping or sequence at column 0, or empty
 *   mapping    `key: value` lines at one indentation; a value on the key's line, or on the
 *              lines below: a mapping indented deeper, a sequence indented deeper or at the
 *              key's own indentation (kubectl's `items:\n- ...`), or nothing (null)
 *   sequence   `- ` items at one indentation; an item is a scalar, `{}`/`[]`, a block scalar,
 *              or a compact mapping (`- key: value`, its other keys below the first)
 *   keys       plain (resolved then made a string, as js-yaml does: `1.0:` is "1"), or
 *              single- or double-quoted on one line; `:` then a space or the line's end
 *   scalars    plain on one line, single- or double-quoted on one line (every js-yaml escape
 *              but the line continuation), `|`, `|-`, `|+` literal block scalars, `{}`, `[]`
 *   comments   whole-line comments anywhere, and ` #...` after a value; blank lines
 *   lines      LF or CRLF
 *
 * It gives up on everything else: anchors, aliases and tags (any `&`/`*` that may start one,
 * with yaml-fast.ts's own test), flow collections with content, `?` keys, multi-line plain or
 * quoted scalars, folded (`>`) block scalars and indentation indicators, tabs, lone CRs,
 * control, non-printable and non-ASCII line-break characters, a BOM, `...`, directives,
 * duplicate keys, `__proto__` and `<<` keys, a plain scalar YAML 1.1 and 1.2 read differently,
 * a scalar or key longer than the limit, nesting deeper than MAX_DEPTH, and any line indented
 * where it does not belong.
 *
 * Spans are js-yaml's (its listener's `open` and `close` positions, objects at depth ≤ 3):
 * a node opens where js-yaml's composer starts on it (just after a key's `:`, at an item's
 * first character after `- `, at a document's first character) and a block collection closes
 * at the first character of the next line that is not blank or a comment (or at the end of
 * the input, counting the newline js-yaml adds when the text has none); `{}` and `[]` close
 * just after their bracket.
 */

import { mayHoldAnchors, resolvePlainScalar, UNCLEAN, type FastDocument } from './yaml-fast.js';

/** Deeper documents are left to js-yaml (which refuses beyond its maxDepth, the limit + 1). */
const MAX_DEPTH = 48;

/** A CR not before a LF (a line break to js-yaml, not to this reader). */
const LONE_CR = /\r(?!\n)/;

/** Thrown to give up; caught once, at the top. */
class GiveUp {}
const GIVE_UP = new GiveUp();

const SPACE = 0x20;
const LF = 0x0a;
const CR = 0x0d;
const HASH = 0x23;
const COLON = 0x3a;
const DASH = 0x2d;
const DQUOTE = 0x22;
const SQUOTE = 0x27;
const BACKSLASH = 0x5c;

/**
 * Every non-empty document of `text` as the fast path (parseYAMLFast) would give it, or
 * undefined when this reader cannot be sure of that. Empty documents are left out (the
 * fast path gives them as null, and readers skip them).
 */
export function parseYAMLBlock(text: string, limits: { maxScalarBytes: number }): FastDocument[] | undefined {
  if (!readable(text)) return undefined;
  try {
    return new BlockReader(text, limits.maxScalarBytes, false).documents();
  } catch (e) {
    if (e === GIVE_UP) return undefined;
    throw e;
  }
}

/**
 * A `kind: List` read item by item (what `kubectl get -o yaml` prints: one document, its
 * `items:` a block sequence at column 0). `root` is the List with `items` holding `count`
 * placeholders; item(i) reads item i now (every call anew), or gives undefined when the reader
 * gives up on it — then the whole file must be read another way, as if parseYAMLBlock had
 * given up. Spans are those parseYAMLBlock would record.
 */
export interface BlockList {
  root: { kind: string; apiVersion?: unknown; items: unknown[] };
  count: number;
  item(index: number): unknown;
  /**
   * Item `index`'s lines: from its `- ` line to the next item's (or to where the sequence
   * ends), whole lines but for a last line without a newline at the end of the input.
   */
  itemRange(index: number): { start: number; end: number };
  spans: FastDocument['spans'];
}

/**
 * The input as a List to read item by item (see BlockList), or all its documents read now
 * (as parseYAMLBlock gives them), or undefined when the reader gives up.
 *
 * Why item by item: the loader decodes each item right after it is read, so a raw item dies
 * young instead of every raw item staying alive (and being copied and marked by the garbage
 * collector) until the last one is read — as JSON input is read (json-objects.ts).
 */
export function openYAMLBlock(
  text: string,
  limits: { maxScalarBytes: number },
  options: { anchors?: boolean } = {},
): { list: BlockList } | { documents: FastDocument[] } | undefined {
  if (!readable(text, options.anchors === true)) return undefined;
  try {
    // With anchors only a List is of use (its items holding anchors are read another way):
    // the reader stops after the first document.
    const anchors = options.anchors === true;
    const reader = new BlockReader(text, limits.maxScalarBytes, true, anchors);
    const docs = reader.documents();
    const lazy = reader.lazy;
    if (lazy === undefined) return anchors ? undefined : { documents: docs };
    const root = docs.length === 1 ? (docs[0]!.value as Record<string, unknown>) : undefined;
    if (!root || root.items !== lazy.items || typeof root.kind !== 'string' || !root.kind.endsWith('List')) {
      // Not a single List after all (a second document, an `items` of another kind): eagerly.
      return anchors ? undefined : { documents: new BlockReader(text, limits.maxScalarBytes, false).documents() };
    }
    return {
      list: {
        root: root as BlockList['root'],
        count: lazy.starts.length,
        spans: reader.spans,
        itemRange: (index) => ({
          start: lazy.starts[index]!,
          end: index + 1 < lazy.starts.length ? lazy.starts[index + 1]! : Math.min(lazy.endPos, text.length),
        }),
        item: (index) => {
          try {
            return reader.listItem(index);
          } catch (e) {
            if (e === GIVE_UP) return undefined;
            throw e;
          }
        },
      },
    };
  } catch (e) {
    if (e === GIVE_UP) return undefined;
    throw e;
  }
}

/**
 * The documents of a stream, each read by the block reader on its own: a piece of the text per
 * document, from the line after a `---` line (or the start) up to the next `---` line (or the
 * end), and its value and spans as parseYAMLBlock gives them, or `undefined` where the reader
 * gives up on it (to be read another way); `null` for a piece without content. Anchors may be
 * in the text (see readable): a document holding one is given up on.
 *
 * Undefined when the pieces might not be js-yaml's documents: a line at column 0 starting
 * `---` or `...` that is not `---` alone (a comment may follow), or what `readable` refuses.
 * Otherwise every `---` line ends a document to js-yaml too, whatever precedes it (its
 * scalars end there, and the flow collections and quoted scalars it cuts are errors in both
 * readings), so js-yaml reads each piece alone as it reads that document of the whole text.
 */
export function blockDocuments(text: string, limits: { maxScalarBytes: number }): Array<{ start: number; end: number; doc: FastDocument | null | undefined }> | undefined {
  if (!readable(text, true)) return undefined;
  const reader = new BlockReader(text, limits.maxScalarBytes, false);
  const out: Array<{ start: number; end: number; doc: FastDocument | null | undefined }> = [];
  let start = 0;
  for (;;) {
    const end = nextSeparator(text, start);
    if (end < 0) return undefined;
    let doc: FastDocument | null | undefined;
    try {
      doc = reader.documentIn(start, end);
    } catch (e) {
      if (e !== GIVE_UP) throw e;
      doc = undefined;
    }
    out.push({ start, end, doc });
    if (end >= text.length) return out;
    const nl = text.indexOf('\n', end);
    start = nl < 0 ? text.length : nl + 1;
  }
}

/**
 * The start of the first `---` line (`---`, then spaces and maybe a comment) at or after the
 * line starting at `from`, or the text's length; -1 at a line starting `---` or `...` otherwise.
 */
function nextSeparator(text: string, from: number): number {
  const len = text.length;
  for (let ls = from; ls < len; ) {
    const c = text.charCodeAt(ls);
    if ((c === DASH || c === 0x2e) && text.charCodeAt(ls + 1) === c && text.charCodeAt(ls + 2) === c) {
      if (c === 0x2e) return -1;
      let i = ls + 3;
      const first = i;
      while (text.charCodeAt(i) === SPACE) i++;
      const d = i < len ? text.charCodeAt(i) : LF;
      if (d === LF || d === CR || (d === HASH && i > first)) return ls;
      return -1;
    }
    const nl = text.indexOf('\n', ls);
    if (nl < 0) break;
    ls = nl + 1;
  }
  return len;
}

/**
 * No anchor may hide in the text (unless `anchors`), and no character the reader does not take on.
 *
 * With `anchors`, a text that may hold anchors is read too: the reader gives up on any node
 * that starts with `&`, `*` or `!` (none may start a plain scalar or a key, and nothing else
 * it reads starts with one), so an item or document holding a real anchor, alias or tag is
 * never read by it; what it does read holds none (a `&` or `*` inside a scalar is content,
 * to js-yaml as to it). For openYAMLBlock's `list`, where the items holding them are read
 * another way (yaml-anchored-list.ts).
 */
function readable(text: string, anchors = false): boolean {
  // mayHoldAnchors can only match where `&` or `*` is: most inputs have neither.
  if (!anchors && (text.includes('&') || text.includes('*')) && mayHoldAnchors(text)) return false;
  // Other characters are checked where the reader reads them (scalars and keys: see `odd`);
  // comments it skips, as js-yaml does, but js-yaml refuses a NUL anywhere, ends a comment at
  // a lone CR, and drops a leading BOM (which would shift every position).
  if (text.includes('\0') || text.charCodeAt(0) === 0xfeff) return false;
  if (text.includes('\r') && LONE_CR.test(text)) return false;
  return true;
}

class BlockReader {
  private readonly len: number;
  /** Where js-yaml's position is at the end of the input (it appends a newline when missing). */
  private readonly eofPos: number;
  readonly spans = new WeakMap<object, { start: number; end: number }>();

  // The next content line (not blank, not a comment): where its first character is, its
  // indentation (-1 at the end of the input and on a `---` line: both close everything) and
  // where the line starts.
  private curPos = 0;
  private curIndent = -1;
  private curLine = 0;
  private curDoc = false;

  /** The first document's `items:` at column 0, when its items are left for listItem. */
  lazy: { items: unknown[]; starts: number[]; endPos: number } | undefined;
  private documentsRead = 0;

  constructor(
    private readonly text: string,
    private readonly maxScalar: number,
    /** Leave the items of a first document's `items:` sequence at column 0 for listItem. */
    private readonly lazyItems: boolean,
    /** Give up at a second document (openYAMLBlock's `anchors`: only a single List is wanted). */
    private readonly firstOnly = false,
  ) {
    this.len = text.length;
    const last = this.len > 0 ? text.charCodeAt(this.len - 1) : LF;
    this.eofPos = last === LF || last === CR ? this.len : this.len + 1;
  }

  documents(): FastDocument[] {
    const out: FastDocument[] = [];
    this.seek(0);
    while (this.curIndent >= 0 || this.curDoc) {
      if (this.curDoc) {
        // `---`: the document after it starts on the next content line.
        this.seek(this.lineAfter(this.curLine));
        continue;
      }
      if (this.curIndent !== 0 || (this.firstOnly && this.documentsRead > 0)) throw GIVE_UP;
      const start = this.curPos;
      const value = this.blockNode(this.curPos, 0, 1);
      if (this.curIndent >= 0) throw GIVE_UP; // more content at the root's indentation
      this.spans.set(value, { start, end: this.curPos });
      out.push({ value, spans: this.spans });
      this.documentsRead++;
    }
    return out;
  }

  /**
   * The document in the piece `start`..`end` (see blockDocuments: whole lines, no `---` line
   * inside, a `---` line or the end of the text at `end`), read as documents() reads one;
   * null when the piece holds no content.
   */
  documentIn(start: number, end: number): FastDocument | null {
    this.seek(start);
    const atEnd = () => (this.curDoc ? this.curLine === end : this.curIndent < 0 && end >= this.len);
    if (atEnd()) return null;
    if (this.curIndent !== 0 || this.curDoc) throw GIVE_UP;
    const open = this.curPos;
    const value = this.blockNode(this.curPos, 0, 1);
    if (this.curIndent >= 0 || !atEnd()) throw GIVE_UP; // more content at the root's indentation, or past the piece
    this.spans.set(value, { start: open, end: this.curPos });
    return { value, spans: this.spans };
  }

  /** The collection starting at `pos` (the current line's first character), indented `indent`. */
  private blockNode(pos: number, indent: number, depth: number): object {
    if (this.text.charCodeAt(pos) === DASH && this.isBlank(pos + 1)) return this.sequence(indent, depth);
    return this.mapping(pos, indent, depth);
  }

  /** Move to the first content line at or after the line starting at `from`. */
  private seek(from: number): void {
    const text = this.text;
    const len = this.len;
    let ls = from;
    for (;;) {
      if (ls >= len) {
        this.atEnd();
        return;
      }
      let i = ls;
      while (text.charCodeAt(i) === SPACE) i++;
      const c = text.charCodeAt(i);
      if (c === LF) {
        ls = i + 1;
        continue;
      }
      if (c === CR) {
        ls = i + 2; // CR is always followed by LF (LONE_CR)
        continue;
      }
      if (c === HASH) {
        const nl = text.indexOf('\n', i);
        if (nl < 0) {
          this.atEnd();
          return;
        }
        ls = nl + 1;
        continue;
      }
      if (i >= len) {
        this.atEnd();
        return;
      }
      if (c < 0x20) throw GIVE_UP; // a tab (in the indentation, or a line of blanks), a control
      this.curLine = ls;
      this.curPos = i;
      this.curDoc = false;
      if (i === ls && (c === DASH || c === 0x2e) && text.charCodeAt(i + 1) === c && text.charCodeAt(i + 2) === c) {
        // js-yaml takes `---` at a document's start whatever follows it (`---x: 1` is `x: 1`).
        if (c === 0x2e || !this.isSpaceOrEnd(i + 3)) throw GIVE_UP; // `...`, `---x`
        this.lineEndAfter(i + 3); // only a comment may follow `---`
        this.curIndent = -1;
        this.curDoc = true;
        return;
      }
      this.curIndent = i - ls;
      return;
    }
  }

  private atEnd(): void {
    this.curPos = this.eofPos;
    this.curIndent = -1;
    this.curLine = this.len;
    this.curDoc = false;
  }

  /** A space, a line break or the end of the input at `i`. */
  private isSpaceOrEnd(i: number): boolean {
    if (i >= this.len) return true;
    const c = this.text.charCodeAt(i);
    return c === SPACE || c === LF || c === CR;
  }

  /** A line break or the end of the input at `i`, or a space (what may follow `-` and `:`). */
  private isBlank(i: number): boolean {
    return this.isSpaceOrEnd(i);
  }

  /** The start of the line after the one holding `i`. */
  private lineAfter(i: number): number {
    const nl = this.text.indexOf('\n', i);
    return nl < 0 ? this.len : nl + 1;
  }

  /**
   * After a value ending at `i`: only spaces and a comment (after a space) may follow on the
   * line. Returns the start of the next line.
   */
  private lineEndAfter(i: number): number {
    const text = this.text;
    const start = i;
    while (text.charCodeAt(i) === SPACE) i++;
    if (i >= this.len) return this.len;
    const c = text.charCodeAt(i);
    if (c === LF) return i + 1;
    if (c === CR) return i + 2;
    if (c === HASH && i > start) return this.lineAfter(i);
    throw GIVE_UP;
  }

  /**
   * A block mapping whose first key starts at `pos` on the current line, indented `indent`;
   * its other keys start lines indented `indent`. Leaves the reader on the line after it.
   */
  private mapping(pos: number, indent: number, depth: number): object {
    if (depth > MAX_DEPTH) throw GIVE_UP;
    const result: Record<string, unknown> = {};
    let keyPos = pos;
    for (;;) {
      const afterColon = this.key(keyPos);
      const key = this.keyText;
      if (Object.prototype.hasOwnProperty.call(result, key)) throw GIVE_UP; // duplicate
      const value = this.value(afterColon, indent, depth + 1);
      result[key] = value;
      if (this.curIndent === indent && !this.curDoc) {
        keyPos = this.curPos;
        if (this.text.charCodeAt(keyPos) === DASH && this.isBlank(keyPos + 1)) throw GIVE_UP; // `- ` after a mapping's entry
        continue;
      }
      if (this.curIndent > indent) throw GIVE_UP;
      return result;
    }
  }

  /** The key read by `key`. */
  private keyText = '';

  /** A mapping key at `pos`; sets keyText and returns the position just after its `:`. */
  private key(pos: number): number {
    const text = this.text;
    const c = text.charCodeAt(pos);
    let end: number;
    let key: string;
    if (c === DQUOTE) {
      end = this.doubleQuoted(pos);
      key = this.scalarText;
    } else if (c === SQUOTE) {
      end = this.singleQuoted(pos);
      key = this.scalarText;
    } else {
      if (!this.plainStart(pos)) throw GIVE_UP;
      end = this.plainKey(pos);
      key = this.keyText;
    }
    if (text.charCodeAt(end) !== COLON || !this.isBlank(end + 1)) throw GIVE_UP;
    if (key.length > this.maxScalar || key === '__proto__' || key === '<<') throw GIVE_UP;
    this.keyText = key;
    return end + 1;
  }

  /**
   * The value after a key's `:` at `pos` (a space or the line's end follows the colon), in a
   * mapping indented `indent`. Records its span; leaves the reader on the next content line.
   */
  private value(pos: number, indent: number, depth: number): unknown {
    const text = this.text;
    let i = pos;
    while (text.charCodeAt(i) === SPACE) i++;
    const c = i < this.len ? text.charCodeAt(i) : LF;
    if (c === LF || c === CR || c === HASH) {
      // Nothing on the key's line: the value is below, or null.
      this.seek(this.lineAfter(i));
      const below = this.curIndent;
      if (below < 0 || this.curDoc || below < indent) return null;
      const at = this.curPos;
      const isItem = text.charCodeAt(at) === DASH && this.isBlank(at + 1);
      if (below === indent && !isItem) return null;
      let node: object;
      if (isItem && this.lazyItems && depth === 2 && below === 0 && this.documentsRead === 0 && this.lazy === undefined && this.keyText === 'items') {
        node = this.skipItems();
      } else {
        node = isItem ? this.sequence(below, depth) : this.mapping(at, below, depth);
      }
      if (depth <= 3) this.spans.set(node, { start: pos, end: this.curPos });
      return node;
    }
    return this.inlineValue(i, pos, indent, depth, false);
  }

  /**
   * A value starting at `i` on its line (after `key: ` or `- `), in a collection indented
   * `indent`; `open` is where js-yaml opens the node. In a sequence item (`item`), a key
   * makes it a compact mapping.
   */
  private inlineValue(i: number, open: number, indent: number, depth: number, item: boolean): unknown {
    const text = this.text;
    const c = text.charCodeAt(i);
    if (c === DQUOTE || c === SQUOTE) {
      const end = c === DQUOTE ? this.doubleQuoted(i) : this.singleQuoted(i);
      if (item && text.charCodeAt(end) === COLON && this.isBlank(end + 1)) return this.compactMapping(i, open, depth);
      const value = this.scalarText;
      this.seek(this.lineEndAfter(end));
      return value;
    }
    if (c === 0x7c /* | */) return this.literal(i, indent);
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (text.charCodeAt(i + 1) !== (c === 0x7b ? 0x7d : 0x5d)) throw GIVE_UP; // content, or `{ }`
      const node = c === 0x7b ? {} : [];
      // js-yaml first tries an item's node as a mapping's key, which takes the spaces after it.
      let end = i + 2;
      if (item) while (text.charCodeAt(end) === SPACE) end++;
      if (depth <= 3) this.spans.set(node, { start: open, end });
      this.seek(this.lineEndAfter(i + 2));
      return node;
    }
    if (!this.plainStart(i)) throw GIVE_UP;
    const colon = this.scanPlain(i);
    if (colon >= 0) {
      if (!item) throw GIVE_UP; // `key: a: b`
      return this.compactMapping(i, open, depth);
    }
    const end = this.plainEnd;
    const value = resolvePlain(text.slice(i, end), this.maxScalar);
    this.seek(this.lineEndAfter(end));
    return value;
  }

  /** `- key: ...`: a mapping indented at the key's column. */
  private compactMapping(i: number, open: number, depth: number): object {
    const node = this.mapping(i, i - this.curLine, depth); // an item starts on the current line
    if (depth <= 3) this.spans.set(node, { start: open, end: this.curPos });
    return node;
  }

  /**
   * The items of a sequence at column 0 (the current line is its first `- `), found but not
   * read: every line starting `- ` at column 0 starts an item, up to the first line at column
   * 0 that is not one, a comment or blank. Inside an item every line is indented (the reader
   * takes no scalar continued at column 0), so when each item reads up to the next one's line
   * (listItem checks it), these are the sequence's items. Leaves the reader after them.
   */
  private skipItems(): unknown[] {
    const text = this.text;
    const starts: number[] = [];
    let ls = this.curLine;
    while (ls < this.len) {
      const c = text.charCodeAt(ls);
      if (c === DASH && this.isBlank(ls + 1)) starts.push(ls);
      else if (c !== SPACE && c !== LF && c !== CR && c !== HASH) break;
      ls = this.lineAfter(ls);
    }
    this.seek(ls);
    const items: unknown[] = new Array(starts.length).fill(null);
    this.lazy = { items, starts, endPos: this.curPos };
    return items;
  }

  /** Item `index` of the lazy sequence, read as sequence() reads an item (depth 3). */
  listItem(index: number): unknown {
    const lazy = this.lazy!;
    const start = lazy.starts[index]!;
    this.curLine = start;
    this.curPos = start;
    this.curIndent = 0;
    this.curDoc = false;
    const text = this.text;
    let i = start + 1;
    while (text.charCodeAt(i) === SPACE) i++;
    const c = i < this.len ? text.charCodeAt(i) : LF;
    if (c === LF || c === CR || c === HASH) throw GIVE_UP;
    if (c === DASH && this.isBlank(i + 1)) throw GIVE_UP;
    const value = this.inlineValue(i, i, 0, 3, true);
    if (value !== null && typeof value === 'object' && !this.spans.has(value)) throw GIVE_UP;
    // The item must end where the next one starts (or where the sequence ends).
    const next = index + 1 < lazy.starts.length ? lazy.starts[index + 1]! : lazy.endPos;
    if (this.curPos !== next) throw GIVE_UP;
    return value;
  }

  /** A block sequence on the current line, indented `indent`. */
  private sequence(indent: number, depth: number): unknown[] {
    if (depth > MAX_DEPTH) throw GIVE_UP;
    const text = this.text;
    const result: unknown[] = [];
    for (;;) {
      // The current line starts with `-` and a space or its end.
      let i = this.curPos + 1;
      while (text.charCodeAt(i) === SPACE) i++;
      const c = i < this.len ? text.charCodeAt(i) : LF;
      if (c === LF || c === CR || c === HASH) throw GIVE_UP; // the item below, or null
      if (c === DASH && this.isBlank(i + 1)) throw GIVE_UP; // `- - x`
      const value = this.inlineValue(i, i, indent, depth + 1, true);
      if (depth + 1 <= 3 && value !== null && typeof value === 'object' && !this.spans.has(value)) {
        // A block scalar or a plain one cannot be an object; compact mappings and `{}`/`[]` set their own.
        throw GIVE_UP;
      }
      result.push(value);
      if (this.curIndent === indent && !this.curDoc) {
        const at = this.curPos;
        if (text.charCodeAt(at) === DASH && this.isBlank(at + 1)) continue;
        return result; // the next key of the mapping holding a sequence at its own indentation
      }
      if (this.curIndent > indent) throw GIVE_UP;
      return result;
    }
  }

  /**
   * Plain keys seen, by a hash of their text (an open table of KEY_SLOTS slots, the latest key
   * per slot): a key repeated (every object has `metadata` and `name`) is the same string,
   * made a property name once, not sliced and internalised again.
   */
  private readonly keyHashes = new Int32Array(KEY_SLOTS);
  private readonly keySources: string[] = new Array<string>(KEY_SLOTS).fill('');
  private readonly keyValues: string[] = new Array<string>(KEY_SLOTS).fill('');

  /**
   * A plain key at `pos` (its first character may start a plain scalar): sets keyText and
   * returns the offset of its `:` (followed by a space or the line's end). Gives up when the
   * line has no such `:`, or a comment or a space comes before it.
   */
  private plainKey(pos: number): number {
    const text = this.text;
    const len = this.len;
    let h = 0;
    let i = pos;
    for (; i < len; i++) {
      const c = text.charCodeAt(i);
      if (c === COLON && this.isBlank(i + 1)) break;
      if (c < 0x20) throw GIVE_UP; // the line's end (no `: `), a tab, a control
      if (c === HASH && text.charCodeAt(i - 1) === SPACE) throw GIVE_UP;
      h = (Math.imul(h, 31) + c) | 0;
      if (c >= 0x7f) i = this.odd(i);
    }
    if (i >= len || text.charCodeAt(i - 1) === SPACE) throw GIVE_UP;
    const n = i - pos;
    const slot = (h ^ (h >>> 13) ^ n) & (KEY_SLOTS - 1);
    if (this.keyHashes[slot] === h) {
      const source = this.keySources[slot]!;
      if (source.length === n && text.startsWith(source, pos)) {
        this.keyText = this.keyValues[slot]!;
        return i;
      }
    }
    const source = text.slice(pos, i);
    const key = plainKey(source);
    this.keyHashes[slot] = h;
    this.keySources[slot] = source;
    this.keyValues[slot] = key;
    this.keyText = key;
    return i;
  }

  /** The value of the last quoted scalar read. */
  private scalarText = '';

  /** A double-quoted scalar on one line at `i`; sets scalarText, returns the position after it. */
  private doubleQuoted(i: number): number {
    const text = this.text;
    let out = '';
    let from = i + 1;
    let j = from;
    for (;;) {
      if (j >= this.len) throw GIVE_UP;
      const c = text.charCodeAt(j);
      if (c === DQUOTE) {
        out += text.slice(from, j);
        break;
      }
      if (c < 0x20) throw GIVE_UP; // multi-line, a tab, a control
      if (c >= 0x7f) {
        j = this.odd(j) + 1;
        continue;
      }
      if (c === BACKSLASH) {
        out += text.slice(from, j);
        const e = text.charCodeAt(j + 1);
        const simple = e < 256 ? SIMPLE_ESCAPES[e] : undefined;
        if (simple !== undefined) {
          out += simple;
          j += 2;
        } else {
          const n = e === 0x78 ? 2 : e === 0x75 ? 4 : e === 0x55 ? 8 : 0;
          if (n === 0) throw GIVE_UP; // a line continuation, or an unknown escape
          let code = 0;
          for (let k = 0; k < n; k++) {
            const h = hexValue(text.charCodeAt(j + 2 + k));
            if (h < 0) throw GIVE_UP;
            code = code * 16 + h;
          }
          if (code > 0x10ffff) throw GIVE_UP;
          out += String.fromCodePoint(code);
          j += 2 + n;
        }
        from = j;
        continue;
      }
      j++;
    }
    if (out.length > this.maxScalar) throw GIVE_UP;
    this.scalarText = out;
    return j + 1;
  }

  /** A single-quoted scalar on one line at `i`; sets scalarText, returns the position after it. */
  private singleQuoted(i: number): number {
    const text = this.text;
    let out = '';
    let from = i + 1;
    let j = from;
    for (;;) {
      if (j >= this.len) throw GIVE_UP;
      const c = text.charCodeAt(j);
      if (c === SQUOTE) {
        out += text.slice(from, j);
        if (text.charCodeAt(j + 1) !== SQUOTE) break;
        out += "'";
        j += 2;
        from = j;
        continue;
      }
      if (c < 0x20) throw GIVE_UP; // multi-line, a tab, a control
      if (c >= 0x7f) j = this.odd(j);
      j++;
    }
    if (out.length > this.maxScalar) throw GIVE_UP;
    this.scalarText = out;
    return j + 1;
  }

  /**
   * A character from U+007F up at `i` in a scalar or key: gives up on DEL, the C1 controls
   * (NEL included), U+2028/2029, BOM, U+FFFE/FFFF and lone surrogates (js-yaml refuses some,
   * reads others as line breaks or content; this reader takes none). Returns the offset of the
   * character's last UTF-16 unit.
   */
  private odd(i: number): number {
    const c = this.text.charCodeAt(i);
    if (c <= 0x9f || c === 0x2028 || c === 0x2029 || c === 0xfeff || c === 0xfffe || c === 0xffff) throw GIVE_UP;
    if (c >= 0xd800 && c <= 0xdfff) {
      const d = this.text.charCodeAt(i + 1);
      if (c > 0xdbff || !(d >= 0xdc00 && d <= 0xdfff)) throw GIVE_UP;
      return i + 1;
    }
    return i;
  }

  /** Whether a plain scalar may start at `i` (the indicators js-yaml's readPlainScalar refuses, and a few more). */
  private plainStart(i: number): boolean {
    const c = this.text.charCodeAt(i);
    if (c === DASH) return !this.isBlank(i + 1);
    return c < 128 ? PLAIN_START[c] === 1 : true;
  }

  /** Where the last plain scalar scanned ends (after its last non-space character). */
  private plainEnd = 0;

  /**
   * Scan a plain scalar from `i` to the end of its line: the offset of a `:` followed by a space
   * or the line's end (a key), or -1. plainEnd is where the scalar's text ends (before a
   * ` #` comment and trailing spaces).
   */
  private scanPlain(i: number): number {
    const text = this.text;
    const len = this.len;
    let end = i;
    for (; i < len; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x20) {
        if (c === LF || c === CR) break;
        throw GIVE_UP; // a tab, a control
      }
      if (c >= 0x7f) i = this.odd(i);
      if (c === COLON) {
        if (this.isBlank(i + 1)) {
          this.plainEnd = end;
          return i;
        }
      } else if (c === HASH) {
        if (text.charCodeAt(i - 1) === SPACE) break;
      }
      if (c !== SPACE) end = i + 1;
    }
    this.plainEnd = end;
    return -1;
  }

  /**
   * A literal block scalar (`|`, `|-`, `|+`) whose header is at `i`, in a collection indented
   * `indent` (js-yaml's nodeIndent for it is indent + 1).
   */
  private literal(i: number, indent: number): string {
    const text = this.text;
    let j = i + 1;
    let chomp = 0; // 0 clip, 1 strip, 2 keep
    const h = text.charCodeAt(j);
    if (h === DASH) {
      chomp = 1;
      j++;
    } else if (h === 0x2b /* + */) {
      chomp = 2;
      j++;
    }
    let ls = this.lineEndAfter(j); // a digit (indentation indicator) or anything else gives up
    // The first line must hold content, indented deeper than the collection.
    let textIndent = 0;
    while (text.charCodeAt(ls + textIndent) === SPACE) textIndent++;
    const first = text.charCodeAt(ls + textIndent);
    if (ls >= this.len || textIndent <= indent || first === LF || first === CR || ls + textIndent >= this.len) throw GIVE_UP;
    let out = '';
    let read = false;
    let empty = 0;
    for (;;) {
      if (ls >= this.len) break;
      let sp = 0;
      while (sp < textIndent && text.charCodeAt(ls + sp) === SPACE) sp++;
      const p = ls + sp;
      const c = p < this.len ? text.charCodeAt(p) : LF;
      if (c === LF || c === CR) {
        empty++; // a line of at most textIndent spaces (at the end, js-yaml's added newline ends it)
        if (p >= this.len) break;
        ls = c === CR ? p + 2 : p + 1;
        continue;
      }
      if (sp < textIndent) break; // the scalar ends
      let e = text.indexOf('\n', p);
      if (e < 0) e = this.len;
      const next = e + 1;
      if (e > p && text.charCodeAt(e - 1) === CR) e--;
      for (let k = p; k < e; k++) {
        const d = text.charCodeAt(k);
        if (d < 0x20) throw GIVE_UP; // a tab, a control
        if (d >= 0x7f) k = this.odd(k);
      }
      out += (read ? '\n'.repeat(1 + empty) : '') + text.slice(p, e);
      if (out.length > this.maxScalar) throw GIVE_UP;
      read = true;
      empty = 0;
      ls = next;
    }
    if (chomp === 0) out += '\n';
    else if (chomp === 2) out += '\n'.repeat(1 + empty);
    if (out.length > this.maxScalar) throw GIVE_UP;
    this.seek(ls);
    return out;
  }
}

const KEY_SLOTS = 4096;

/** First characters of a plain scalar (ASCII): not an indicator, a space or a control character. */
const PLAIN_START = new Uint8Array(128);
for (let c = 0x21; c < 0x7f; c++) PLAIN_START[c] = 1;
for (const ch of ',[]{}#&*!|>\'"%@`?:-') PLAIN_START[ch.charCodeAt(0)] = 0;

/** js-yaml's one-character escapes (a tab after `\` never reaches here: tabs give up). */
const SIMPLE_ESCAPES: Array<string | undefined> = new Array(256).fill(undefined);
for (const [ch, v] of Object.entries({ '0': '\x00', a: '\x07', b: '\x08', t: '\x09', n: '\x0A', v: '\x0B', f: '\x0C', r: '\x0D', e: '\x1B', ' ': ' ', '"': '"', '/': '/', '\\': '\\', N: '\x85', _: '\xA0', L: '\u2028', P: '\u2029' })) {
  SIMPLE_ESCAPES[ch.charCodeAt(0)] = v;
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const l = c | 0x20;
  if (l >= 0x61 && l <= 0x66) return l - 0x61 + 10;
  return -1;
}

/**
 * The plain scalars whose value is plain to see, without the resolvers (the common ones in
 * manifests): `undefined` for the others. A decimal of at most 15 digits without a leading
 * zero is that number (no YAML 1.1 reading differs, and it is exact in a double); digits
 * with two or more dots (an IPv4 address) are a string (no number has two dots, no YAML 1.1
 * form takes dots without `:` or `_`); a word starting with a letter is a string unless it is
 * one of the special words of the core schema or YAML 1.1 (`true`, `null`, `yes`, `off`, ...).
 */
export function obviousPlain(source: string): unknown {
  const n = source.length;
  const c = source.charCodeAt(0);
  if (c >= 0x31 && c <= 0x39) {
    let dots = 0;
    let i = 1;
    for (; i < n; i++) {
      const d = source.charCodeAt(i);
      if (d === 0x2e) {
        if (source.charCodeAt(i - 1) === 0x2e) return undefined;
        dots++;
      } else if (d < 0x30 || d > 0x39) return colonWord(source) ? source : undefined;
    }
    if (dots === 0) return n <= 15 ? Number(source) : undefined;
    return dots >= 2 && source.charCodeAt(n - 1) !== 0x2e ? source : undefined;
  }
  if (c === 0x30) return n === 1 ? 0 : undefined;
  const l = c | 0x20;
  if (l >= 0x61 && l <= 0x7a) {
    if (n > 5) return source;
    const special = SPECIAL_WORDS.get(source);
    return special === undefined ? source : special === AMBIGUOUS ? undefined : special;
  }
  return undefined;
}

const AMBIGUOUS = Symbol('ambiguous');

/**
 * A `:` and a character no number takes (`2001:db8::1`): a string. No core form has a `:`,
 * and YAML 1.1's base-60 numbers are made of digits, `:`, `.`, `_` and a sign only.
 */
function colonWord(source: string): boolean {
  if (!source.includes(':')) return false;
  for (let i = 0; i < source.length; i++) {
    const d = source.charCodeAt(i);
    if (!((d >= 0x30 && d <= 0x3a) || d === 0x2e || d === 0x5f || d === 0x2b || d === 0x2d)) return true;
  }
  return false;
}

/**
 * Every plain scalar of at most 5 characters, starting with a letter, that is not a string
 * under SCHEMA: the core schema's booleans and nulls (their values), and YAML 1.1's booleans
 * (ambiguous: the resolvers decide, and give them up).
 */
const SPECIAL_WORDS = new Map<string, unknown>([
  ...['null', 'Null', 'NULL'].map((w) => [w, null] as const),
  ...['true', 'True', 'TRUE'].map((w) => [w, true] as const),
  ...['false', 'False', 'FALSE'].map((w) => [w, false] as const),
  ...['y', 'Y', 'yes', 'Yes', 'YES', 'n', 'N', 'no', 'No', 'NO', 'on', 'On', 'ON', 'off', 'Off', 'OFF'].map((w) => [w, AMBIGUOUS] as const),
]);

function resolvePlain(source: string, maxScalar: number): unknown {
  if (source.length > maxScalar) throw GIVE_UP;
  const obvious = obviousPlain(source);
  if (obvious !== undefined) return obvious;
  const value = resolvePlainScalar(source);
  if (value === UNCLEAN) throw GIVE_UP;
  return value;
}

/** A plain key as js-yaml makes it a property name: resolved, then String() of the value. */
function plainKey(source: string): string {
  const obvious = obviousPlain(source);
  if (obvious !== undefined) return String(obvious);
  const value = resolvePlainScalar(source);
  if (value === UNCLEAN) throw GIVE_UP; // js-yaml would name it "[object Object]"
  return String(value);
}
