/**
 * Topology-aware hints (the `service.kubernetes.io/topology-mode: Auto` annotation):
 * k8s.io/endpointslice topologycache (topologycache.go SetNodes / getAllocations / AddHints,
 * utils.go getGivingAndReceivingZones / redistributeHints), for slices being created.
 *
 * The cache weighs zones by the allocatable CPU of their ready Nodes (control-plane Nodes left
 * out); one Node without a zone or CPU, or fewer than 2 zones, and no Service gets hints. Each
 * ready endpoint is first hinted for its own zone; then zones holding more endpoints than their
 * CPU share (beyond 20 % overload) give some to zones holding fewer.
 *
 * The controller's state is what it is once it has seen every Node (in a running cluster its
 * topology worker has); its random choices are kpc's first ones in order: the zone with the
 * most to give or receive (getMost over a Go map: the first of equals, kpc takes the first
 * name), which receiving zone an endpoint goes to (map order; kpc: zone names in order), and
 * which endpoints of a giving zone are given (in the controller's random order of endpoints;
 * kpc: in its own endpoint order).
 */

import { compareStrings } from '../../go/strings.js';
import { addQuantities, isZeroQuantity, milliValue, parseQuantity, type Quantity } from '../../parser/k8s/quantity.js';
import type { Node } from '../../parser/k8s/types.js';
import { ZONE_LABEL } from '../../parser/k8s/model/node.js';
import type { DerivedEndpointSlice } from './model.js';

/** overloadThreshold: the most overload any one endpoint should be exposed to. */
const OVERLOAD_THRESHOLD = 0.2;

export interface TopologyCache {
  /** Zone → share of the cluster's allocatable CPU; undefined: insufficient node info. */
  cpuRatiosByZone: ReadonlyMap<string, number> | undefined;
}

/** Why hints were not given, in the controller's event words (topologycache/event.go). */
export type TopologyOutcome = { addressType: 'IPv4' | 'IPv6'; hints: true } | { addressType: 'IPv4' | 'IPv6'; hints: false; why: string };

/** TopologyCache.SetNodes. */
export function topologyCacheFor(nodes: readonly Node[]): TopologyCache {
  const cpuByZone = new Map<string, Quantity>();
  let total: Quantity = { num: 0n, den: 1n };
  for (const node of nodes) {
    const labels = node.metadata.labels;
    if ('node-role.kubernetes.io/control-plane' in labels || 'node-role.kubernetes.io/master' in labels) continue;
    if (node.status.ready !== true) continue;
    const cpu = node.status.allocatableCPU === undefined ? undefined : parseQuantity(node.status.allocatableCPU);
    const zone = labels[ZONE_LABEL];
    if (zone === undefined || zone === '' || cpu === undefined || isZeroQuantity(cpu)) return { cpuRatiosByZone: undefined };
    total = addQuantities(total, cpu);
    cpuByZone.set(zone, cpuByZone.has(zone) ? addQuantities(cpuByZone.get(zone)!, cpu) : cpu);
  }
  if (isZeroQuantity(total) || cpuByZone.size < 2) return { cpuRatiosByZone: undefined };
  const ratios = new Map<string, number>();
  const totalMilli = milliValue(total);
  for (const [zone, cpu] of cpuByZone) ratios.set(zone, milliValue(cpu) / totalMilli);
  return { cpuRatiosByZone: ratios };
}

export interface Allocation {
  minimum: number;
  maximum: number;
  desired: number;
}

/** getAllocations, or the reason there are none. */
function allocations(cache: TopologyCache, numEndpoints: number): Map<string, Allocation> | string {
  const ratios = cache.cpuRatiosByZone;
  if (ratios === undefined) return 'Insufficient Node information: allocatable CPU or zone not specified on one or more nodes';
  // Unreachable from topologyCacheFor (SetNodes leaves no ratios for fewer than 2 zones), as
  // in the controller, which checks it all the same.
  if (ratios.size < 2) return 'Nodes only ready in one zone';
  if (ratios.size > numEndpoints) return `Insufficient number of endpoints (${numEndpoints} endpoints, ${ratios.size} zones)`;
  let remaining = numEndpoints;
  let minTotal = 0;
  const out = new Map<string, Allocation>();
  for (const [zone, ratio] of ratios) {
    const desired = ratio * numEndpoints;
    const minimum = Math.ceil(desired * (1 / (1 + OVERLOAD_THRESHOLD)));
    out.set(zone, { minimum, maximum: 0, desired: Math.max(desired, minimum) });
    minTotal += minimum;
    remaining -= minimum;
    if (remaining < 0) return `Unable to allocate minimum required endpoints to each zone without exceeding overload threshold (${numEndpoints} endpoints, ${ratios.size} zones)`;
  }
  for (const a of out.values()) a.maximum = a.minimum + numEndpoints - minTotal;
  return out;
}

/** getMost: the zone with the largest positive value (the first of equals in name order). */
function most(zones: Map<string, number>): [string, number] {
  let zone = '';
  let num = 0;
  for (const z of [...zones.keys()].sort(compareStrings)) {
    const n = zones.get(z)!;
    if (n > num) {
      zone = z;
      num = n;
    }
  }
  return [zone, num];
}

/** getGivingAndReceivingZones. */
export function givingAndReceiving(allocs: Map<string, Allocation>, allocated: Map<string, number>): { giving: Map<string, number>; receiving: Map<string, number> } {
  const givingDesired = new Map<string, number>();
  const receivingDesired = new Map<string, number>();
  for (const [zone, a] of allocs) {
    const have = allocated.get(zone) ?? 0;
    if (have > a.desired) givingDesired.set(zone, have - a.desired);
    else if (have < a.desired) receivingDesired.set(zone, a.desired - have);
  }
  const giving = new Map<string, number>();
  const receiving = new Map<string, number>();
  for (;;) {
    const [gz, toGive] = most(givingDesired);
    const [rz, toReceive] = most(receivingDesired);
    if (gz === '' || rz === '' || (toGive < 1.0 && toReceive < 1.0) || toGive < 0.5 || toReceive < 0.5) break;
    giving.set(gz, (giving.get(gz) ?? 0) + 1);
    givingDesired.set(gz, givingDesired.get(gz)! - 1);
    receiving.set(rz, (receiving.get(rz) ?? 0) + 1);
    receivingDesired.set(rz, receivingDesired.get(rz)! - 1);
  }
  return { giving, receiving };
}

function clearHints(slices: DerivedEndpointSlice[]): void {
  for (const s of slices) for (const ep of s.endpoints) delete ep.hints;
}

/** TopologyCache.AddHints for slices being created (none unchanged, none updated). */
export function addTopologyHints(slices: DerivedEndpointSlice[], cache: TopologyCache, addressType: 'IPv4' | 'IPv6'): TopologyOutcome {
  const ready = slices.flatMap((s) => s.endpoints.filter((e) => e.conditions.ready));
  const allocs = allocations(cache, ready.length);
  if (typeof allocs === 'string') {
    clearHints(slices);
    return { addressType, hints: false, why: allocs };
  }
  const allocated = new Map<string, number>();
  // Step 1: every ready endpoint is hinted for its own zone.
  for (const s of slices) {
    for (const ep of s.endpoints) {
      if (!ep.conditions.ready) {
        delete ep.hints;
        continue;
      }
      if (ep.zone === undefined || ep.zone === '') {
        clearHints(slices);
        return { addressType, hints: false, why: 'One or more endpoints do not have a zone specified' };
      }
      allocated.set(ep.zone, (allocated.get(ep.zone) ?? 0) + 1);
      ep.hints = { forZones: [ep.zone], forNodes: [] };
    }
  }
  // Steps 2 and 3: zones with too many give endpoints to zones with too few.
  const { giving, receiving } = givingAndReceiving(allocs, allocated);
  const receivers = [...receiving.keys()].sort(compareStrings);
  for (const ep of ready) {
    if (giving.size === 0 || receiving.size === 0) break;
    const toGive = giving.get(ep.zone!);
    if (toGive === undefined || toGive <= 0) continue;
    const to = receivers.find((z) => (receiving.get(z) ?? 0) > 0);
    if (to === undefined) continue;
    ep.hints = { forZones: [to], forNodes: [] };
    if (toGive === 1) giving.delete(ep.zone!);
    else giving.set(ep.zone!, toGive - 1);
    const toReceive = receiving.get(to)!;
    if (toReceive === 1) receiving.delete(to);
    else receiving.set(to, toReceive - 1);
  }
  if (allocated.size === 0) {
    clearHints(slices);
    return { addressType, hints: false, why: 'No hints allocated for zones' };
  }
  return { addressType, hints: true };
}
