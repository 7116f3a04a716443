import { describe, expect, it } from 'vitest';
import type { Service } from '../../../src/parser/k8s/types.js';
import { validateSessionAffinity } from '../../../src/parser/k8s/validate/service-session-affinity.js';
import { validateAllocateLoadBalancerNodePorts } from '../../../src/parser/k8s/validate/service-load-balancer.js';
import { validateExternalTrafficPolicy } from '../../../src/parser/k8s/validate/service-traffic.js';
import type { CoreService } from '../../../src/parser/k8s/model/service.js';
import { DNS1035, DNS1123_LABEL, DNS1123_SUBDOMAIN, INVALID_CIDR, INVALID_IP, LABEL_VALUE, LEGACY, QUALIFIED_NAME_PART, STRICT, decodeWith, errorsOf, ok, render, service, warningsOf, type Raw } from './helpers.js';

interface Case {
  name: string;
  change: (s: Raw) => void;
  errors: string[];
  warnings?: string[];
}

const NO_NODE_PORT = 'Required value: not allocated; kube-proxy programs no node port for this port (use a manifest read back from the cluster)';
const PORT_RANGE = 'must be between 1 and 65535, inclusive';

function check(cases: Case[]) {
  for (const c of cases) {
    it(c.name, () => {
      const r = decodeWith(service, c.change);
      expect(errorsOf(r)).toEqual(c.errors);
      if (c.warnings) expect(warningsOf(r)).toEqual(c.warnings);
      if (c.errors.length === 0) expect(r.status).toBe('ok');
    });
  }
}

describe('Service: happy paths and defaults', () => {
  it('decodes a ClusterIP service and fills in the defaults', () => {
    const r = decodeWith(service, () => {});
    expect(warningsOf(r)).toEqual([]);
    const svc = ok<Service>(r);
    expect(svc.spec).toEqual({
      type: 'ClusterIP',
      clusterIP: '10.96.0.10',
      clusterIPs: ['10.96.0.10'],
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080, nodePort: 0 }],
      selector: { app: 'web' },
      externalIPs: [],
      loadBalancerSourceRanges: [],
      sessionAffinity: 'None',
      internalTrafficPolicy: 'Cluster',
      healthCheckNodePort: 0,
    });
    expect(svc.status).toEqual({ loadBalancerIngress: [] });
  });

  it('defaults targetPort to port (int 0 and "")', () => {
    const svc = ok<Service>(
      decodeWith(service, (s) => {
        s.spec.ports = [
          { name: 'a', port: 80 },
          { name: 'b', port: 81, targetPort: '' },
          { name: 'c', port: 82, targetPort: 0 },
        ];
      }),
    );
    expect(svc.spec.ports.map((p) => p.targetPort)).toEqual([80, 81, 82]);
  });

  it('defaults a NodePort service: externalTrafficPolicy Cluster, nodePorts kept', () => {
    const svc = ok<Service>(
      decodeWith(service, (s) => {
        s.spec.type = 'NodePort';
        s.spec.ports[0].nodePort = 30080;
      }),
    );
    expect(svc.spec.externalTrafficPolicy).toBe('Cluster');
    expect(svc.spec.internalTrafficPolicy).toBe('Cluster');
    expect(svc.spec.ports[0]!.nodePort).toBe(30080);
  });

  it('defaults a LoadBalancer: allocateLoadBalancerNodePorts true, ingress ipMode VIP', () => {
    const svc = ok<Service>(
      decodeWith(service, (s) => {
        s.spec.type = 'LoadBalancer';
        s.spec.ports[0].nodePort = 30080;
        s.status = { loadBalancer: { ingress: [{ ip: '203.0.113.7' }, { hostname: 'lb.example.com' }] } };
      }),
    );
    expect(svc.spec.allocateLoadBalancerNodePorts).toBe(true);
    expect(svc.status.loadBalancerIngress).toEqual([{ ip: '203.0.113.7', ipMode: 'VIP' }, { hostname: 'lb.example.com' }]);
  });

  it('a ClusterIP service with externalIPs is externally accessible: ETP defaults to Cluster', () => {
    const r = decodeWith(service, (s) => {
      s.spec.externalIPs = ['203.0.113.9'];
    });
    expect(ok<Service>(r).spec.externalTrafficPolicy).toBe('Cluster');
    expect(warningsOf(r)).toEqual(['spec.externalIPs: spec.externalIPs is deprecated and may no longer be implemented in some clusters']);
  });

  it('ClientIP affinity gets the 10800s timeout, None drops a given config', () => {
    expect(ok<Service>(decodeWith(service, (s) => (s.spec.sessionAffinity = 'ClientIP'))).spec.sessionAffinityTimeoutSeconds).toBe(10800);
    const none = ok<Service>(
      decodeWith(service, (s) => {
        s.spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 5 } };
      }),
    );
    expect(none.spec.sessionAffinity).toBe('None');
    expect(none.spec.sessionAffinityTimeoutSeconds).toBeUndefined();
  });

  it('infers ipFamilies per clusterIP for a dual-stack service', () => {
    const svc = ok<Service>(
      decodeWith(service, (s) => {
        s.spec.clusterIPs = ['10.96.0.10', 'fd00::10'];
        s.spec.ipFamilyPolicy = 'PreferDualStack';
      }),
    );
    expect(svc.spec.ipFamilies).toEqual(['IPv4', 'IPv6']);
  });

  it('headless and selectorless gets RequireDualStack and both families', () => {
    const svc = ok<Service>(
      decodeWith(service, (s) => {
        s.spec.clusterIP = 'None';
        delete s.spec.selector;
        s.spec.ipFamilies = ['IPv6'];
      }),
    );
    expect(svc.spec.ipFamilyPolicy).toBe('RequireDualStack');
    expect(svc.spec.ipFamilies).toEqual(['IPv6', 'IPv4']);
  });

  it('ExternalName needs no cluster IP and gets no internalTrafficPolicy', () => {
    const svc = ok<Service>(
      decodeWith(service, (s) => {
        s.spec = { type: 'ExternalName', externalName: 'db.example.com.' };
      }),
    );
    expect(svc.spec.internalTrafficPolicy).toBeUndefined();
    expect(svc.spec.ipFamilyPolicy).toBeUndefined();
    expect(svc.spec.externalName).toBe('db.example.com.');
  });

  it('a headless service needs no ports', () => {
    expect(
      decodeWith(service, (s) => {
        s.spec.clusterIP = 'None';
        delete s.spec.ports;
      }).status,
    ).toBe('ok');
  });

  it('ports sharing a port number share a node port (TCP and UDP 53)', () => {
    const svc = ok<Service>(
      decodeWith(service, (s) => {
        s.spec.type = 'NodePort';
        s.spec.ports = [
          { name: 'dns', port: 53, protocol: 'UDP' },
          { name: 'dns-tcp', port: 53, protocol: 'TCP', nodePort: 30053 },
        ];
      }),
    );
    expect(svc.spec.ports.map((p) => p.nodePort)).toEqual([30053, 30053]);
  });
});

describe('Service: metadata (validation.md §4)', () => {
  check([
    { name: 'name is required', change: (s) => delete s.metadata.name, errors: ['metadata.name: Required value: name or generateName is required'] },
    {
      name: 'generateName cannot be resolved offline',
      change: (s) => {
        delete s.metadata.name;
        s.metadata.generateName = 'web-';
      },
      errors: ['metadata.generateName: Forbidden: kpc cannot generate a name offline; set metadata.name (use a manifest read back from the cluster)'],
    },
    { name: 'name is a DNS-1035 label (no leading digit)', change: (s) => (s.metadata.name = '1web'), errors: [`metadata.name: Invalid value: "1web": ${DNS1035}`] },
    { name: 'name is at most 63 characters', change: (s) => (s.metadata.name = 'a'.repeat(64)), errors: [`metadata.name: Invalid value: "${'a'.repeat(64)}": must be no more than 63 characters`] },
    {
      name: 'generateName is checked with its trailing dash masked (upstream drops two characters)',
      change: (s) => (s.metadata.generateName = 'Web-'),
      errors: [`metadata.generateName: Invalid value: "Web-": ${DNS1035}`],
    },
    { name: 'namespace is required', change: (s) => delete s.metadata.namespace, errors: ['metadata.namespace: Required value'] },
    { name: 'namespace is a DNS-1123 label', change: (s) => (s.metadata.namespace = 'Prod'), errors: [`metadata.namespace: Invalid value: "Prod": ${DNS1123_LABEL}`] },
    { name: 'label keys are qualified names', change: (s) => (s.metadata.labels = { 'a b': 'x' }), errors: [`metadata.labels: Invalid value: "a b": ${QUALIFIED_NAME_PART}`] },
    { name: 'label values are label values', change: (s) => (s.metadata.labels = { app: '-x' }), errors: [`metadata.labels: Invalid value: "-x": ${LABEL_VALUE}`] },
    {
      name: 'label key prefixes are DNS subdomains',
      change: (s) => (s.metadata.labels = { 'Example.com/app': 'x' }),
      errors: [`metadata.labels: Invalid value: "Example.com/app": prefix part ${DNS1123_SUBDOMAIN}`],
    },
    {
      name: 'annotation keys are qualified names, ignoring case',
      change: (s) => (s.metadata.annotations = { 'Example.COM/Fine': 'x', 'bad key': 'y' }),
      errors: [`metadata.annotations: Invalid value: "bad key": ${QUALIFIED_NAME_PART}`],
    },
    {
      name: 'annotations total at most 256 KiB',
      change: (s) => (s.metadata.annotations = { big: 'x'.repeat(262142) }),
      errors: ['metadata.annotations: Too long: may not be more than 262144 bytes'],
    },
    { name: 'generation is not negative', change: (s) => (s.metadata.generation = -1), errors: ['metadata.generation: Invalid value: -1: must be greater than or equal to 0'] },
    {
      name: 'owner references need apiVersion, kind, name and uid',
      change: (s) => (s.metadata.ownerReferences = [{ apiVersion: '', kind: '', name: '', uid: '' }]),
      errors: [
        'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
        'metadata.ownerReferences.kind: Invalid value: "": must not be empty',
        'metadata.ownerReferences.name: Invalid value: "": must not be empty',
        'metadata.ownerReferences.uid: Invalid value: "": must not be empty',
      ],
    },
    {
      name: 'finalizers are qualified names, and unprefixed ones must be standard',
      change: (s) => (s.metadata.finalizers = ['kubernetes', 'example.com/cleanup', 'custom']),
      errors: ['metadata.finalizers[2]: Invalid value: "custom": name is neither a standard finalizer name nor is it fully qualified'],
    },
    {
      name: 'managed fields operations are Apply or Update',
      change: (s) => (s.metadata.managedFields = [{ manager: 'kubectl', operation: 'Patch', fieldsType: 'FieldsV1' }]),
      errors: ['metadata.managedFields[0].operation: Invalid value: "Patch": must be `Apply` or `Update`'],
    },
  ]);
});

describe('Service: spec.ports (validation.md §5.2)', () => {
  check([
    { name: 'ports are required', change: (s) => delete s.spec.ports, errors: ['spec.ports: Required value'] },
    {
      name: 'names are required with several ports',
      change: (s) => s.spec.ports.push({ port: 443 }),
      errors: ['spec.ports[1].name: Required value'],
    },
    { name: 'a single port may be unnamed', change: (s) => delete s.spec.ports[0].name, errors: [] },
    { name: 'names are DNS-1123 labels', change: (s) => (s.spec.ports[0].name = 'HTTP'), errors: [`spec.ports[0].name: Invalid value: "HTTP": ${DNS1123_LABEL}`] },
    {
      name: 'names are unique',
      change: (s) => s.spec.ports.push({ name: 'http', port: 443 }),
      errors: ['spec.ports[1].name: Duplicate value: "http"'],
    },
    { name: 'port 0', change: (s) => (s.spec.ports[0].port = 0), errors: [`spec.ports[0].port: Invalid value: 0: ${PORT_RANGE}`] },
    { name: 'port 70000', change: (s) => (s.spec.ports[0].port = 70000), errors: [`spec.ports[0].port: Invalid value: 70000: ${PORT_RANGE}`] },
    {
      name: 'protocol is case-sensitive',
      change: (s) => (s.spec.ports[0].protocol = 'tcp'),
      errors: ['spec.ports[0].protocol: Unsupported value: "tcp": supported values: "SCTP", "TCP", "UDP"'],
    },
    { name: 'int targetPort out of range', change: (s) => (s.spec.ports[0].targetPort = 70000), errors: [`spec.ports[0].targetPort: Invalid value: 70000: ${PORT_RANGE}`] },
    {
      name: 'a quoted number is a port name, and needs a letter',
      change: (s) => (s.spec.ports[0].targetPort = '8080'),
      errors: ['spec.ports[0].targetPort: Invalid value: "8080": must contain at least one letter (a-z)'],
    },
    {
      name: 'port names are lowercase',
      change: (s) => (s.spec.ports[0].targetPort = 'HTTP'),
      errors: [
        'spec.ports[0].targetPort: Invalid value: "HTTP": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
        'spec.ports[0].targetPort: Invalid value: "HTTP": must contain at least one letter (a-z)',
      ],
    },
    {
      name: 'port names are at most 15 characters',
      change: (s) => (s.spec.ports[0].targetPort = 'abcdefghijklmnop'),
      errors: ['spec.ports[0].targetPort: Invalid value: "abcdefghijklmnop": must be no more than 15 characters'],
    },
    {
      name: 'port names have no double or edge hyphens',
      change: (s) => (s.spec.ports[0].targetPort = '-a--b'),
      errors: [
        'spec.ports[0].targetPort: Invalid value: "-a--b": must not contain consecutive hyphens',
        'spec.ports[0].targetPort: Invalid value: "-a--b": must not begin or end with a hyphen',
      ],
    },
    { name: 'a named targetPort is fine', change: (s) => (s.spec.ports[0].targetPort = 'http-alt'), errors: [] },
    {
      name: 'appProtocol is a qualified name',
      change: (s) => (s.spec.ports[0].appProtocol = 'a/b/c'),
      errors: [
        "spec.ports[0].appProtocol: Invalid value: \"a/b/c\": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
      ],
    },
    { name: 'appProtocol kubernetes.io/h2c is fine', change: (s) => (s.spec.ports[0].appProtocol = 'kubernetes.io/h2c'), errors: [] },
    {
      name: 'nodePort is forbidden on ClusterIP',
      change: (s) => (s.spec.ports[0].nodePort = 30080),
      errors: ["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"],
    },
    {
      name: '(protocol, port) pairs are unique',
      change: (s) => s.spec.ports.push({ name: 'other', port: 80, targetPort: 9090 }),
      errors: ['spec.ports[1]: Duplicate value: {"Name":"","Protocol":"TCP","AppProtocol":null,"Port":80,"TargetPort":0,"NodePort":0}'],
    },
    { name: 'TCP and UDP may share a port', change: (s) => s.spec.ports.push({ name: 'udp', port: 80, protocol: 'UDP' }), errors: [] },
    {
      name: '(protocol, nodePort) pairs are unique, and the allocator refuses the second use',
      change: (s) => {
        s.spec.type = 'NodePort';
        s.spec.ports = [
          { name: 'a', port: 80, nodePort: 30080 },
          { name: 'b', port: 81, nodePort: 30080 },
        ];
      },
      errors: ['spec.ports[1].nodePort: Invalid value: 30080: provided port is already allocated', 'spec.ports[1].nodePort: Duplicate value: 30080'],
    },
  ]);
});

describe('Service: type, selector, session affinity', () => {
  check([
    {
      name: 'type must be supported',
      change: (s) => (s.spec.type = 'Foo'),
      errors: ['spec.type: Unsupported value: "Foo": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"'],
    },
    { name: 'selector is validated as labels', change: (s) => (s.spec.selector = { app: 'a b' }), errors: [`spec.selector: Invalid value: "a b": ${LABEL_VALUE}`] },
    {
      name: 'sessionAffinity must be supported',
      change: (s) => (s.spec.sessionAffinity = 'Sticky'),
      errors: ['spec.sessionAffinity: Unsupported value: "Sticky": supported values: "ClientIP", "None"'],
    },
    {
      name: 'ClientIP timeout must be above 0',
      change: (s) => {
        s.spec.sessionAffinity = 'ClientIP';
        s.spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 0 } };
      },
      errors: ['spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 0: must be greater than 0 and less than 86400'],
    },
    {
      name: 'ClientIP timeout of one day is accepted despite the message',
      change: (s) => {
        s.spec.sessionAffinity = 'ClientIP';
        s.spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 86400 } };
      },
      errors: [],
    },
    {
      name: 'ClientIP timeout above one day',
      change: (s) => {
        s.spec.sessionAffinity = 'ClientIP';
        s.spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 86401 } };
      },
      errors: ['spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 86401: must be greater than 0 and less than 86400'],
    },
  ]);

  // These rules cannot fire through v1 (defaulting fills or clears the config first), so they
  // are checked on the internal object directly.
  const core = (affinity: string, config?: CoreService['spec']['sessionAffinityConfig']): CoreService =>
    ({ spec: { sessionAffinity: affinity, ...(config ? { sessionAffinityConfig: config } : {}) } }) as CoreService;
  it.each([
    ['ClientIP without config', core('ClientIP'), ['spec.sessionAffinityConfig: Required value: when session affinity type is ClientIP']],
    ['ClientIP without clientIP', core('ClientIP', {}), ['spec.sessionAffinityConfig.clientIP: Required value: when session affinity type is ClientIP']],
    ['ClientIP without timeout', core('ClientIP', { clientIP: {} }), ['spec.sessionAffinityConfig.clientIP.timeoutSeconds: Required value: when session affinity type is ClientIP']],
    ['None with config', core('None', { clientIP: { timeoutSeconds: 5 } }), ['spec.sessionAffinityConfig: Forbidden: must not be set when session affinity is None']],
    ['empty affinity', core(''), ['spec.sessionAffinity: Required value']],
  ])('unreachable through v1: %s', (_name, svc, expected) => {
    expect(render(validateSessionAffinity(svc))).toEqual(expected);
  });
});

describe('Service: cluster IPs and IP families', () => {
  check([
    {
      name: 'kpc needs the allocated cluster IP',
      change: (s) => delete s.spec.clusterIP,
      errors: ['spec.clusterIP: Required value: not allocated; kpc needs the cluster IP a cluster assigned (use a manifest read back from the cluster)'],
    },
    {
      name: 'clusterIPs[0] must match clusterIP',
      change: (s) => (s.spec.clusterIPs = ['10.96.0.11']),
      errors: ['spec.clusterIPs: Invalid value: ["10.96.0.11"]: first value must match `clusterIP`'],
    },
    {
      name: 'clusterIPs without clusterIP',
      change: (s) => {
        delete s.spec.clusterIP;
        s.spec.clusterIPs = ['10.96.0.10'];
      },
      errors: ['spec.clusterIPs: Invalid value: ["10.96.0.10"]: must be empty when `clusterIP` is not specified'],
    },
    {
      name: "'None' must be the only value",
      change: (s) => {
        s.spec.clusterIP = 'None';
        s.spec.clusterIPs = ['None', '10.96.0.10'];
      },
      errors: ['spec.clusterIPs: Invalid value: ["None","10.96.0.10"]: \'None\' must be the first and only value'],
    },
    {
      name: 'at most two cluster IPs',
      change: (s) => {
        s.spec.clusterIPs = ['10.96.0.10', 'fd00::10', '10.96.0.11'];
        s.spec.ipFamilyPolicy = 'RequireDualStack';
      },
      errors: ['spec.clusterIPs: Invalid value: ["10.96.0.10","fd00::10","10.96.0.11"]: may only hold up to 2 values'],
    },
    {
      name: 'one cluster IP per family',
      change: (s) => {
        s.spec.clusterIPs = ['10.96.0.10', '10.96.0.11'];
        s.spec.ipFamilyPolicy = 'RequireDualStack';
      },
      errors: ['spec.clusterIPs: Invalid value: ["10.96.0.10","10.96.0.11"]: may specify no more than one IP for each IP family'],
    },
    {
      name: 'a cluster IP must be an IP',
      change: (s) => (s.spec.clusterIP = '10.96.0.300'),
      errors: [`spec.clusterIPs[0]: Invalid value: "10.96.0.300": ${INVALID_IP}`],
    },
    {
      name: 'each cluster IP matches its family',
      change: (s) => {
        s.spec.clusterIP = 'fd00::10';
        s.spec.ipFamilies = ['IPv4'];
      },
      errors: ['spec.clusterIPs[0]: Invalid value: "fd00::10": expected an IPv4 value as indicated by `ipFamilies[0]`'],
    },
    {
      name: 'ipFamilies are IPv4 or IPv6',
      change: (s) => (s.spec.ipFamilies = ['IPv5']),
      errors: ['spec.ipFamilies[0]: Unsupported value: "IPv5": supported values: "IPv4", "IPv6"'],
    },
    {
      name: 'ipFamilies have no duplicates',
      change: (s) => {
        s.spec.ipFamilies = ['IPv4', 'IPv4'];
        s.spec.ipFamilyPolicy = 'PreferDualStack';
      },
      errors: ['spec.ipFamilies[1]: Duplicate value: "IPv4"'],
    },
    {
      name: 'ipFamilyPolicy must be supported',
      change: (s) => (s.spec.ipFamilyPolicy = 'DualStack'),
      errors: ['spec.ipFamilyPolicy: Unsupported value: "DualStack": supported values: "PreferDualStack", "RequireDualStack", "SingleStack"'],
    },
    {
      name: 'two cluster IPs need a dual-stack policy (the default is SingleStack)',
      change: (s) => (s.spec.clusterIPs = ['10.96.0.10', 'fd00::10']),
      errors: ["spec.ipFamilyPolicy: Invalid value: \"SingleStack\": must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"],
    },
    {
      name: 'two families need a dual-stack policy',
      change: (s) => {
        s.spec.ipFamilies = ['IPv4', 'IPv6'];
        s.spec.ipFamilyPolicy = 'SingleStack';
      },
      errors: ["spec.ipFamilyPolicy: Invalid value: \"SingleStack\": must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"],
    },
    {
      name: 'headless is not allowed for NodePort',
      change: (s) => {
        s.spec.type = 'NodePort';
        s.spec.clusterIP = 'None';
      },
      errors: ['spec.clusterIPs[0]: Invalid value: "None": may not be set to \'None\' for NodePort services'],
      warnings: [`spec.ports[0].nodePort: ${NO_NODE_PORT}`],
    },
    {
      name: 'headless is not allowed for LoadBalancer',
      change: (s) => {
        s.spec.type = 'LoadBalancer';
        s.spec.clusterIP = 'None';
      },
      errors: ['spec.clusterIPs[0]: Invalid value: "None": may not be set to \'None\' for LoadBalancer services'],
      warnings: [`spec.ports[0].nodePort: ${NO_NODE_PORT}`],
    },
  ]);
});

describe('Service: ExternalName', () => {
  const externalName = (s: Raw) => {
    s.spec = { type: 'ExternalName', externalName: 'db.example.com' };
  };
  check([
    {
      name: 'externalName is required',
      change: (s) => {
        externalName(s);
        delete s.spec.externalName;
      },
      errors: ['spec.externalName: Required value'],
    },
    {
      name: 'externalName is a DNS subdomain',
      change: (s) => {
        externalName(s);
        s.spec.externalName = 'DB.example.com';
      },
      errors: [`spec.externalName: Invalid value: "DB.example.com": ${DNS1123_SUBDOMAIN}`],
    },
    {
      name: 'cluster IPs, families and policy are forbidden',
      change: (s) => {
        externalName(s);
        s.spec.clusterIP = '10.96.0.10';
        s.spec.ipFamilies = ['IPv4'];
        s.spec.ipFamilyPolicy = 'SingleStack';
      },
      errors: [
        'spec.clusterIPs: Forbidden: may not be set for ExternalName services',
        'spec.ipFamilies: Forbidden: may not be set for ExternalName services',
        'spec.ipFamilyPolicy: Forbidden: may not be set for ExternalName services',
      ],
    },
  ]);
});

describe('Service: externalIPs', () => {
  const ext = (ip: string) => (s: Raw) => (s.spec.externalIPs = [ip]);
  const deprecated = 'spec.externalIPs: spec.externalIPs is deprecated and may no longer be implemented in some clusters';
  check([
    { name: 'must be an IP', change: ext('a.b.c.d'), errors: [`spec.externalIPs[0]: Invalid value: "a.b.c.d": ${INVALID_IP}`] },
    { name: 'not unspecified', change: ext('0.0.0.0'), errors: ['spec.externalIPs[0]: Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)'] },
    { name: 'not loopback', change: ext('127.0.0.1'), errors: ['spec.externalIPs[0]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)'] },
    { name: 'not link-local', change: ext('169.254.169.254'), errors: ['spec.externalIPs[0]: Invalid value: "169.254.169.254": may not be in the link-local range (169.254.0.0/16, fe80::/10)'] },
    {
      name: 'not link-local multicast',
      change: ext('ff02::1'),
      errors: ['spec.externalIPs[0]: Invalid value: "ff02::1": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)'],
    },
    { name: 'other multicast is allowed ("probably a bug" upstream)', change: ext('239.1.1.1'), errors: [], warnings: [deprecated] },
  ]);
});

describe('Service: LoadBalancer fields', () => {
  const lb = (s: Raw) => {
    s.spec.type = 'LoadBalancer';
    s.spec.ports[0].nodePort = 30080;
  };
  check([
    {
      name: 'source ranges only for LoadBalancer (capitalised path, upstream bug)',
      change: (s) => (s.spec.loadBalancerSourceRanges = ['10.0.0.0/8']),
      errors: ["spec.LoadBalancerSourceRanges: Forbidden: may only be used when `type` is 'LoadBalancer'"],
    },
    {
      name: 'source ranges are CIDRs, space-padding allowed',
      change: (s) => {
        lb(s);
        s.spec.loadBalancerSourceRanges = [' 10.0.0.0/8 ', '10.0.0.0'];
      },
      errors: [`spec.LoadBalancerSourceRanges[1]: Invalid value: "10.0.0.0": ${INVALID_CIDR}`],
    },
    {
      name: 'the annotation is checked when the field is empty',
      change: (s) => {
        lb(s);
        s.metadata.annotations = { 'service.beta.kubernetes.io/load-balancer-source-ranges': '10.0.0.0/8, bogus' };
      },
      errors: [`metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]: Invalid value: "bogus": ${INVALID_CIDR}`],
    },
    {
      name: 'the annotation is only for LoadBalancer',
      change: (s) => (s.metadata.annotations = { 'service.beta.kubernetes.io/load-balancer-source-ranges': '10.0.0.0/8' }),
      errors: ["metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]: Forbidden: may only be used when `type` is 'LoadBalancer'"],
    },
    {
      name: 'allocateLoadBalancerNodePorts only for LoadBalancer',
      change: (s) => (s.spec.allocateLoadBalancerNodePorts = false),
      errors: ["spec.allocateLoadBalancerNodePorts: Forbidden: may only be used when `type` is 'LoadBalancer'"],
    },
    {
      name: 'without node port allocation, a LoadBalancer port needs no nodePort',
      change: (s) => {
        s.spec.type = 'LoadBalancer';
        s.spec.allocateLoadBalancerNodePorts = false;
      },
      errors: [],
      warnings: [],
    },
    {
      name: 'loadBalancerClass only for LoadBalancer',
      change: (s) => (s.spec.loadBalancerClass = 'example.com/lb'),
      errors: ["spec.loadBalancerClass: Forbidden: may only be used when `type` is 'LoadBalancer'"],
    },
    {
      name: 'loadBalancerClass is a qualified name',
      change: (s) => {
        lb(s);
        s.spec.loadBalancerClass = 'example.com/-lb';
      },
      errors: [`spec.loadBalancerClass: Invalid value: "example.com/-lb": ${QUALIFIED_NAME_PART}`],
    },
    {
      name: 'ingress status only for LoadBalancer',
      change: (s) => (s.status = { loadBalancer: { ingress: [{ ip: '203.0.113.7' }] } }),
      errors: ["status.loadBalancer.ingress: Forbidden: may only be used when `spec.type` is 'LoadBalancer'"],
    },
    {
      name: 'ingress ip, ipMode and hostname',
      change: (s) => {
        lb(s);
        s.status = {
          loadBalancer: {
            ingress: [
              { ip: '203.0.113.300' },
              { ip: '203.0.113.7', ipMode: 'Direct' },
              { hostname: 'lb.example.com', ipMode: 'VIP' },
              { hostname: '203.0.113.8' },
            ],
          },
        };
      },
      errors: [
        `status.loadBalancer.ingress[0].ip: Invalid value: "203.0.113.300": ${INVALID_IP}`,
        'status.loadBalancer.ingress[1].ipMode: Unsupported value: "Direct": supported values: "Proxy", "VIP"',
        'status.loadBalancer.ingress[2].ipMode: Forbidden: may not be specified when `ip` is not set',
        'status.loadBalancer.ingress[3].hostname: Invalid value: "203.0.113.8": must be a DNS name, not an IP address',
      ],
    },
  ]);

  it('unreachable through v1: allocateLoadBalancerNodePorts is required for LoadBalancer (path without spec.)', () => {
    const svc = { spec: { type: 'LoadBalancer' } } as CoreService;
    expect(render(validateAllocateLoadBalancerNodePorts(svc))).toEqual(['allocateLoadBalancerNodePorts: Required value']);
  });
});

describe('Service: traffic policies and distribution', () => {
  const np = (s: Raw) => {
    s.spec.type = 'NodePort';
    s.spec.ports[0].nodePort = 30080;
  };
  check([
    {
      name: 'externalTrafficPolicy only for externally accessible services',
      change: (s) => (s.spec.externalTrafficPolicy = 'Local'),
      errors: ['spec.externalTrafficPolicy: Invalid value: "Local": may only be set for externally-accessible services'],
    },
    {
      name: 'externalTrafficPolicy values',
      change: (s) => {
        np(s);
        s.spec.externalTrafficPolicy = 'local';
      },
      errors: ['spec.externalTrafficPolicy: Unsupported value: "local": supported values: "Cluster", "Local"'],
    },
    {
      name: 'healthCheckNodePort only for LoadBalancer with Local',
      change: (s) => {
        np(s);
        s.spec.healthCheckNodePort = 30100;
      },
      errors: ["spec.healthCheckNodePort: Invalid value: 30100: may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"],
    },
    {
      name: 'healthCheckNodePort must be a port number',
      change: (s) => {
        s.spec.type = 'LoadBalancer';
        s.spec.externalTrafficPolicy = 'Local';
        s.spec.ports[0].nodePort = 30080;
        s.spec.healthCheckNodePort = 70000;
      },
      errors: [
        'spec.healthCheckNodePort: Internal error: failed to allocate requested HealthCheck NodePort 70000: provided port is not in the valid range. The range of valid ports is 30000-32767',
        `spec.healthCheckNodePort: Invalid value: 70000: ${PORT_RANGE}`,
      ],
    },
    {
      name: 'a missing healthCheckNodePort is a warning (the cluster would allocate it)',
      change: (s) => {
        s.spec.type = 'LoadBalancer';
        s.spec.externalTrafficPolicy = 'Local';
        s.spec.ports[0].nodePort = 30080;
      },
      errors: [],
      warnings: ['spec.healthCheckNodePort: Required value: not allocated; kube-proxy serves no health check node port for this service (use a manifest read back from the cluster)'],
    },
    {
      name: 'internalTrafficPolicy values',
      change: (s) => (s.spec.internalTrafficPolicy = 'Node'),
      errors: ['spec.internalTrafficPolicy: Unsupported value: "Node": supported values: "Cluster", "Local"'],
    },
    {
      name: 'trafficDistribution values',
      change: (s) => (s.spec.trafficDistribution = 'Nearby'),
      errors: ['spec.trafficDistribution: Unsupported value: "Nearby": supported values: "PreferClose", "PreferSameZone", "PreferSameNode"'],
    },
    {
      name: 'PreferClose is deprecated',
      change: (s) => (s.spec.trafficDistribution = 'PreferClose'),
      errors: [],
      warnings: ['spec.trafficDistribution: "PreferClose" is deprecated; use "PreferSameZone"'],
    },
    {
      name: 'topology-mode must match the deprecated topology-aware-hints',
      change: (s) =>
        (s.metadata.annotations = { 'service.kubernetes.io/topology-mode': 'Auto', 'service.kubernetes.io/topology-aware-hints': 'Disabled' }),
      errors: ['metadata.annotations[service.kubernetes.io/topology-mode]: Invalid value: "Auto": must match annotations[service.kubernetes.io/topology-aware-hints] when both are specified'],
      warnings: [
        'metadata.annotations[service.kubernetes.io/topology-aware-hints]: annotation service.kubernetes.io/topology-aware-hints is deprecated, please use service.kubernetes.io/topology-mode instead',
      ],
    },
  ]);

  it('unreachable through v1: externalTrafficPolicy and healthCheckNodePort are required', () => {
    const svc = { spec: { type: 'LoadBalancer', externalIPs: [], externalTrafficPolicy: '', healthCheckNodePort: 0 } } as unknown as CoreService;
    expect(render(validateExternalTrafficPolicy(svc, { ipValidation: 'legacy', offlineAllocation: false }))).toEqual(['spec.externalTrafficPolicy: Required value']);
    svc.spec.externalTrafficPolicy = 'Local';
    expect(render(validateExternalTrafficPolicy(svc, { ipValidation: 'legacy', offlineAllocation: false }))).toEqual(['spec.healthCheckNodePort: Required value']);
  });
});

describe('Service: node ports offline (the registry allocator)', () => {
  check([
    {
      name: 'a nodePort outside the range',
      change: (s) => {
        s.spec.type = 'NodePort';
        s.spec.ports[0].nodePort = 80;
      },
      errors: ['spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767'],
    },
    {
      name: 'a missing nodePort is accepted with a warning',
      change: (s) => (s.spec.type = 'NodePort'),
      errors: [],
      warnings: [`spec.ports[0].nodePort: ${NO_NODE_PORT}`],
    },
  ]);

  it('uses the given node-port range', () => {
    const r = decodeWith(
      service,
      (s) => {
        s.spec.type = 'NodePort';
        s.spec.ports[0].nodePort = 30080;
      },
      { ipValidation: 'legacy', nodePortRange: { min: 20000, max: 20999 } },
    );
    expect(errorsOf(r)).toEqual(['spec.ports[0].nodePort: Invalid value: 30080: provided port is not in the valid range. The range of valid ports is 20000-20999']);
  });
});

describe('Service: warnings of GetWarningsForService', () => {
  check([
    {
      name: 'headless services ignore externalIPs, loadBalancerIP and affinity',
      change: (s) => {
        s.spec.clusterIP = 'None';
        s.spec.externalIPs = ['203.0.113.9'];
        s.spec.loadBalancerIP = '203.0.113.10';
        s.spec.sessionAffinity = 'ClientIP';
      },
      errors: [],
      warnings: [
        'spec.loadBalancerIP: spec.loadBalancerIP is ignored for headless services',
        'spec.externalIPs: spec.externalIPs is ignored for headless services',
        'spec.sessionAffinity: spec.SessionAffinity is ignored for headless services',
      ],
    },
    {
      name: 'externalName is ignored unless type ExternalName',
      change: (s) => (s.spec.externalName = 'db.example.com'),
      errors: [],
      warnings: ['spec.externalName: spec.externalName is ignored when spec.type is not "ExternalName"'],
    },
    {
      name: 'externalIPs are ignored for ExternalName',
      change: (s) => (s.spec = { type: 'ExternalName', externalName: 'db.example.com', externalIPs: ['203.0.113.9'] }),
      errors: [],
      warnings: ['spec.externalIPs: spec.externalIPs is ignored when spec.type is "ExternalName"'],
    },
    {
      name: 'a non-standard loadBalancerIP',
      change: (s) => (s.spec.loadBalancerIP = '203.0.113.010'),
      errors: [],
      warnings: ['spec.loadBalancerIP: non-standard IP address "203.0.113.010" will be considered invalid in a future Kubernetes release: use "203.0.113.10"'],
    },
    {
      name: 'a non-canonical IPv6 cluster IP',
      change: (s) => (s.spec.clusterIP = 'FD00:0:0::10'),
      errors: [],
      warnings: ['spec.clusterIPs[0]: IPv6 address "FD00:0:0::10" should be in RFC 5952 canonical format ("fd00::10")'],
    },
  ]);
});

describe('Service: legacy and strict IP validation (KEP-4858)', () => {
  it('legacy accepts leading zeros with a warning that says how it was read', () => {
    const r = decodeWith(service, (s) => (s.spec.clusterIP = '010.96.0.10'));
    expect(r.status).toBe('ok');
    expect(warningsOf(r)).toEqual([
      'spec.clusterIPs[0]: Invalid value: "010.96.0.10": must not have leading 0s (accepted as 10.96.0.10, as clusters before v1.36 do; iptables would read it as octal)',
    ]);
  });

  it('strict rejects leading zeros', () => {
    const r = decodeWith(service, (s) => (s.spec.clusterIP = '010.96.0.10'), STRICT);
    expect(errorsOf(r)).toEqual(['spec.clusterIPs[0]: Invalid value: "010.96.0.10": must not have leading 0s']);
  });

  it('strict rejects IPv4-mapped IPv6 and CIDR host bits', () => {
    const r = decodeWith(
      service,
      (s) => {
        s.spec.type = 'LoadBalancer';
        s.spec.ports[0].nodePort = 30080;
        s.spec.externalIPs = ['::ffff:203.0.113.9'];
        s.spec.loadBalancerSourceRanges = ['10.1.2.3/8'];
      },
      STRICT,
    );
    expect(errorsOf(r)).toEqual([
      'spec.externalIPs[0]: Invalid value: "::ffff:203.0.113.9": must not be an IPv4-mapped IPv6 address',
      'spec.LoadBalancerSourceRanges[0]: Invalid value: "10.1.2.3/8": must not have bits set beyond the prefix length',
    ]);
  });

  it('legacy keeps the special-address check on a mapped address', () => {
    const r = decodeWith(service, (s) => (s.spec.externalIPs = ['::ffff:127.0.0.1']), LEGACY);
    expect(errorsOf(r)).toEqual(['spec.externalIPs[0]: Invalid value: "::ffff:127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)']);
  });
});
