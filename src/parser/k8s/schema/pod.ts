/**
 * v1 Pod on the wire. Every field of PodSpec and Container (k8s.io/api core/v1 up to v0.37) is
 * accepted, so `kubectl get pods -o yaml` decodes and a misspelt field is still an error; only
 * the fields the EndpointSlice controller reads are typed (container ports, nodeName, hostname,
 * subdomain), the rest are taken as any JSON value. Pod status grows every release and is read
 * only for its phase, conditions and pod IPs, so its other fields are accepted unchecked.
 */

import { z } from 'zod';
import type { CoreContainer, CorePod } from '../model/pod.js';
import { objectMetaSchema, toCoreObjectMeta } from './meta.js';
import { anything, int32, int64, list, str, struct } from './primitives.js';

const containerPort = z.strictObject({
  name: str(),
  hostPort: int32(),
  containerPort: int32(),
  protocol: str(),
  hostIP: str(),
});

const container = z.strictObject({
  name: str(),
  image: str(),
  command: anything(),
  args: anything(),
  workingDir: anything(),
  ports: list(containerPort),
  envFrom: anything(),
  env: anything(),
  resources: anything(),
  resizePolicy: anything(),
  restartPolicy: str(),
  restartPolicyRules: anything(),
  volumeMounts: anything(),
  volumeDevices: anything(),
  livenessProbe: anything(),
  readinessProbe: anything(),
  startupProbe: anything(),
  lifecycle: anything(),
  terminationMessagePath: anything(),
  terminationMessagePolicy: anything(),
  imagePullPolicy: anything(),
  securityContext: anything(),
  stdin: anything(),
  stdinOnce: anything(),
  tty: anything(),
});

/** The PodSpec fields kpc never reads (scheduling, volumes, security...). */
const UNREAD_SPEC_FIELDS = [
  'volumes', 'ephemeralContainers', 'restartPolicy', 'terminationGracePeriodSeconds', 'activeDeadlineSeconds', 'dnsPolicy',
  'nodeSelector', 'serviceAccountName', 'serviceAccount', 'automountServiceAccountToken', 'hostNetwork', 'hostPID', 'hostIPC',
  'shareProcessNamespace', 'securityContext', 'imagePullSecrets', 'affinity', 'schedulerName', 'tolerations', 'hostAliases',
  'priorityClassName', 'priority', 'dnsConfig', 'readinessGates', 'runtimeClassName', 'enableServiceLinks', 'preemptionPolicy',
  'overhead', 'topologySpreadConstraints', 'setHostnameAsFQDN', 'os', 'hostUsers', 'schedulingGates', 'resourceClaims',
  'resources', 'hostnameOverride', 'workloadRef', 'schedulingGroup', 'evictionResponders',
] as const;

const unreadSpec = Object.fromEntries(UNREAD_SPEC_FIELDS.map((f) => [f, anything()])) as Record<(typeof UNREAD_SPEC_FIELDS)[number], ReturnType<typeof anything>>;

const podCondition = z.strictObject({
  type: str(),
  observedGeneration: int64(),
  status: str(),
  lastProbeTime: str(),
  lastTransitionTime: str(),
  reason: str(),
  message: str(),
});

export const podSchema = z.strictObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: objectMetaSchema,
  spec: struct({
    ...unreadSpec,
    containers: list(container),
    initContainers: list(container),
    nodeName: str(),
    hostname: str(),
    subdomain: str(),
  }),
  status: z
    .looseObject({
      phase: str(),
      conditions: list(podCondition),
      podIP: str(),
      podIPs: list(z.strictObject({ ip: str() })),
    })
    .nullish(),
});

export type WirePod = z.infer<typeof podSchema>;

type WireContainer = z.infer<typeof container>;

function toCoreContainer(c: WireContainer): CoreContainer {
  const out: CoreContainer = {
    name: c.name ?? '',
    ports: (c.ports ?? []).map((p) => ({ name: p.name ?? '', hostPort: p.hostPort ?? 0, containerPort: p.containerPort ?? 0, protocol: p.protocol ?? '' })),
  };
  if (c.restartPolicy != null) out.restartPolicy = c.restartPolicy;
  return out;
}

/**
 * Go's view of the decoded v1 Pod, before the v1 → internal conversion of the pod IPs
 * (defaults/pod.ts): the v1 podIP is kept as status.podIP here.
 */
export function toCorePod(w: WirePod): CorePod & { status: { podIP: string } } {
  return {
    apiVersion: w.apiVersion,
    kind: w.kind,
    metadata: toCoreObjectMeta(w.metadata),
    spec: {
      nodeName: w.spec?.nodeName ?? '',
      hostname: w.spec?.hostname ?? '',
      subdomain: w.spec?.subdomain ?? '',
      containers: (w.spec?.containers ?? []).map(toCoreContainer),
      initContainers: (w.spec?.initContainers ?? []).map(toCoreContainer),
    },
    status: {
      phase: w.status?.phase ?? '',
      conditions: (w.status?.conditions ?? []).map((c) => ({ type: c.type ?? '', status: c.status ?? '', observedGeneration: c.observedGeneration ?? 0 })),
      podIP: w.status?.podIP ?? '',
      podIPs: (w.status?.podIPs ?? []).map((p) => p.ip ?? ''),
    },
  };
}
