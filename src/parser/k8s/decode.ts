/**
 * decodeObject: one parsed YAML/JSON document in, one typed Kubernetes object (or every problem
 * with it) out, following the API server's create pipeline: check apiVersion/kind, decode
 * strictly, apply defaults and registry steps, validate, collect all errors.
 *
 * Message formats (see schema/issues.ts for the structural ones):
 *   unknown field:   `spec.foo: unknown field "spec.foo"`
 *   wrong JSON type: `spec.ports[0].port: Invalid value: "80": spec.ports[0].port in body must be of type integer: "string"`
 *   API rules:       the API server's field.Error text, byte for byte
 *   kpc rules:       the same form, with a detail that says what kpc needs
 */

import { fieldError } from '../../diagnostics.js';
import { invalid, required } from './field-errors.js';
import { decodeEndpointSlice } from './decode/endpoint-slice.js';
import { decodeEndpoints } from './decode/endpoints.js';
import { decodeNode } from './decode/node.js';
import { decodePod } from './decode/pod.js';
import type { DecodeOptions } from './decode/options.js';
import { invalidResult, type DecodeResult } from './decode/result.js';
import { decodeService } from './decode/service.js';
import { decodeServiceCIDR } from './decode/service-cidr.js';
import { isKindName, SERVED, skipNote, unservedVersionDetail, type KindName } from './kinds.js';
import { badValueOf, jsonTypeOf } from './schema/issues.js';
import { renderBadValue } from './go-format.js';

export type { DecodeOptions } from './decode/options.js';
export type { DecodeResult } from './decode/result.js';

const DECODERS: Readonly<Record<KindName, (raw: unknown, opts: DecodeOptions) => DecodeResult>> = {
  Service: decodeService,
  EndpointSlice: decodeEndpointSlice,
  Endpoints: decodeEndpoints,
  Node: decodeNode,
  Pod: decodePod,
  ServiceCIDR: decodeServiceCIDR,
};

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function stringField(obj: Record<string, unknown>, name: string): string | undefined {
  const v = obj[name];
  return typeof v === 'string' ? v : undefined;
}

function metadataOf(obj: Record<string, unknown>): { namespace: string; name: string } {
  const m = isObject(obj.metadata) ? obj.metadata : {};
  return { namespace: stringField(m, 'namespace') ?? '', name: stringField(m, 'name') ?? '' };
}

export function decodeObject(raw: unknown, opts: DecodeOptions): DecodeResult {
  if (!isObject(raw)) {
    return invalidResult([fieldError([], `Invalid value: ${renderBadValue(badValueOf(raw))}: a Kubernetes object must be of type object: "${jsonTypeOf(raw)}"`)]);
  }
  const kind = raw.kind;
  const apiVersion = raw.apiVersion;
  if (kind === undefined || kind === null || kind === '') return invalidResult([required(['kind'])]);
  if (typeof kind !== 'string') return invalidResult([invalid(['kind'], badValueOf(kind), `kind in body must be of type string: "${jsonTypeOf(kind)}"`)]);
  if (!isKindName(kind)) {
    const { namespace, name } = metadataOf(raw);
    return { status: 'skipped', note: skipNote(typeof apiVersion === 'string' ? apiVersion : '', kind, namespace, name), kind };
  }
  if (apiVersion === undefined || apiVersion === null || apiVersion === '') return invalidResult([required(['apiVersion'])]);
  if (typeof apiVersion !== 'string') {
    return invalidResult([invalid(['apiVersion'], badValueOf(apiVersion), `apiVersion in body must be of type string: "${jsonTypeOf(apiVersion)}"`)]);
  }
  if (apiVersion !== SERVED[kind]) return invalidResult([invalid(['apiVersion'], apiVersion, unservedVersionDetail(kind, apiVersion))]);
  return DECODERS[kind](raw, opts);
}
