import assert from 'node:assert/strict';
import { test } from 'node:test';
import { caBundlePatch, serviceOfCertSecret, type ConversionView } from './ca-bundle.ts';

const ours = { namespace: 'operators', name: 'aiops-operator-service' };
const crd = (
  strategy: string,
  service: { namespace: string; name: string } | undefined,
  caBundle?: string,
): ConversionView => ({
  spec: {
    conversion: {
      strategy,
      webhook: {
        clientConfig: { ...(service ? { service } : {}), ...(caBundle !== undefined ? { caBundle } : {}) },
      },
    },
  },
});

test('the caBundle is put back only where the CRD points at our Service and has none', () => {
  const cases: [string, ConversionView, boolean][] = [
    ['bundle copy: webhook, our Service, no caBundle', crd('Webhook', ours), true],
    ['empty caBundle', crd('Webhook', ours, ''), true],
    ['OLM has written one', crd('Webhook', ours, 'b2xt'), false],
    ['strategy None (after uninstall)', crd('None', ours), false],
    ['another namespace', crd('Webhook', { ...ours, namespace: 'elsewhere' }), false],
    ['another Service', crd('Webhook', { ...ours, name: 'other' }), false],
    ['a URL webhook', crd('Webhook', undefined), false],
    ['no conversion at all', { spec: {} }, false],
  ];
  for (const [name, view, patched] of cases)
    assert.equal(caBundlePatch(view, ours, 'Q0E=') !== undefined, patched, name);
  assert.deepEqual(caBundlePatch(crd('Webhook', ours), ours, 'Q0E='), {
    spec: { conversion: { webhook: { clientConfig: { caBundle: 'Q0E=' } } } },
  });
});

test("OLM's Secret names its Service: <service>-cert", () => {
  assert.deepEqual(serviceOfCertSecret('operators', 'aiops-operator-service-cert'), ours);
  assert.equal(serviceOfCertSecret('operators', 'my-tls'), undefined);
  assert.equal(serviceOfCertSecret('operators', '-cert'), undefined);
});
