/**
 * KubeProxyConfiguration on the wire: kubeproxy.config.k8s.io/v1alpha1 (k8s.io/kube-proxy
 * config/v1alpha1/types.go), the only version kube-proxy v1.34–v1.37 registers
 * (pkg/proxy/apis/config/scheme). The schema comes in a strict and a lenient form, because
 * kube-proxy decodes strictly and falls back to lenient decoding.
 */

import { z } from 'zod';
import { anything, bool, boolMap, int32, list, str, stringList } from '../schema/primitives.js';

/** A metav1.Duration: a Go duration string such as "30s" (checked after decoding). */
const duration = () => z.string().nullish();

function builders(strict: boolean) {
  const obj = <S extends z.ZodRawShape>(shape: S) => (strict ? z.strictObject(shape) : z.object(shape)).nullish();
  return { obj };
}

function clientConnection(obj: ReturnType<typeof builders>['obj']) {
  return obj({ kubeconfig: str(), acceptContentTypes: str(), contentType: str(), qps: z.number().nullish(), burst: int32() });
}

function conntrack(obj: ReturnType<typeof builders>['obj']) {
  return obj({
    maxPerCore: int32(),
    min: int32(),
    tcpEstablishedTimeout: duration(),
    tcpCloseWaitTimeout: duration(),
    tcpBeLiberal: bool(),
    udpTimeout: duration(),
    udpStreamTimeout: duration(),
  });
}

function winkernel(obj: ReturnType<typeof builders>['obj']) {
  return obj({ networkName: str(), sourceVip: str(), enableDSR: bool(), rootHnsEndpointName: str(), forwardHealthCheckVip: bool() });
}

export function v1alpha1Schema(strict: boolean) {
  const { obj } = builders(strict);
  const top = strict ? z.strictObject : z.object;
  return top({
    apiVersion: z.string(),
    kind: z.string(),
    featureGates: boolMap(),
    clientConnection: clientConnection(obj),
    // component-base LoggingConfiguration: accepted as is (kpc does not log like kube-proxy).
    logging: anything(),
    hostnameOverride: str(),
    bindAddress: str(),
    healthzBindAddress: str(),
    metricsBindAddress: str(),
    bindAddressHardFail: bool(),
    enableProfiling: bool(),
    showHiddenMetricsForVersion: str(),
    serviceProxyName: str(),
    mode: str(),
    iptables: obj({ masqueradeBit: int32(), masqueradeAll: bool(), localhostNodePorts: bool(), syncPeriod: duration(), minSyncPeriod: duration() }),
    ipvs: obj({
      syncPeriod: duration(),
      minSyncPeriod: duration(),
      scheduler: str(),
      excludeCIDRs: stringList(),
      strictARP: bool(),
      tcpTimeout: duration(),
      tcpFinTimeout: duration(),
      udpTimeout: duration(),
    }),
    nftables: obj({ masqueradeBit: int32(), masqueradeAll: bool(), syncPeriod: duration(), minSyncPeriod: duration(), tableName: str() }),
    winkernel: winkernel(obj),
    windowsRunAsService: bool(),
    detectLocalMode: str(),
    detectLocal: obj({ bridgeInterface: str(), interfaceNamePrefix: str() }),
    clusterCIDR: str(),
    nodePortAddresses: stringList(),
    oomScoreAdj: int32(),
    conntrack: conntrack(obj),
    configSyncPeriod: duration(),
    portRange: str(),
  });
}

export type WireV1Alpha1 = z.infer<ReturnType<typeof v1alpha1Schema>>;
