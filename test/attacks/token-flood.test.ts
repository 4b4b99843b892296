// Attack on /metrics as shipped: peers on two loopback addresses (127.0.0.2
// and 127.0.0.3, two pods) send random bearer tokens as fast as they can while the scraper bound
// to the aiops-metrics-reader ClusterRole keeps scraping. Every scrape must succeed (its grant
// is cached apart from the flood's failures), and the TokenReviews the operator sends, counted
// by the apiserver, must stay within what the per-address pace allows for the time the flood
// took: the flood's volume does not matter, only the number of peers and the time.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { METRICS_AUTH_LIMITS } from '../../operator/runtime/metrics-auth.ts';
import { apiserverRequests } from '../support/apiserver-requests.ts';
import { httpsCall } from '../support/https-call.ts';
import { useStage } from './use-stage.ts';

const { stage } = useStage({ bystander: false });

/** GET /metrics with `token`, from `localAddress` when given. */
const get = (token: string, localAddress?: string) =>
  httpsCall(stage.operator.metricsPort, '/metrics', {
    ca: stage.scraper.ca,
    headers: { Authorization: `Bearer ${token}` },
    ...(localAddress !== undefined ? { localAddress } : {}),
  });

/** TokenReviews the apiserver has answered so far (the operator is the only one sending them). */
const tokenReviews = (): Promise<number> =>
  apiserverRequests(stage.admin, { resource: 'tokenreviews', verb: 'POST' });

const PEERS = ['127.0.0.2', '127.0.0.3'];
/** Requests each peer sends, and how many it keeps in flight. */
const PER_PEER = 600;
const WORKERS = 8;

test('random tokens from two peers: every scrape succeeds, TokenReviews stay within the per-address pace', async (t) => {
  const first = await get(stage.scraper.token);
  assert.equal(first.status, 200, first.text);
  const reviewsBefore = await tokenReviews();

  const flood = new Map<number, number>();
  const started = Date.now();
  let flooding = true;
  const peer = async (address: string): Promise<void> => {
    let sent = 0;
    const worker = async (): Promise<void> => {
      while (sent < PER_PEER) {
        sent++;
        const res = await get(randomBytes(32).toString('base64url'), address);
        flood.set(res.status, (flood.get(res.status) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, worker));
  };
  const scrapes: { status: number; text: string }[] = [];
  const scraper = async (): Promise<void> => {
    while (flooding) scrapes.push(await get(stage.scraper.token));
  };
  const scraping = scraper();
  await Promise.all(PEERS.map(peer));
  flooding = false;
  await scraping;
  const elapsedS = (Date.now() - started) / 1000;

  const refused = scrapes.filter((s) => s.status !== 200);
  assert.ok(scrapes.length > 0, 'the scraper scraped during the flood');
  assert.deepEqual(
    refused.map((s) => `${s.status} ${s.text.trim()}`),
    [],
    `every one of ${scrapes.length} scrapes succeeds`,
  );
  assert.deepEqual(
    [...flood.keys()].filter((code) => code !== 401 && code !== 429),
    [],
    `the flood reads nothing: ${JSON.stringify([...flood])}`,
  );

  const reviews = (await tokenReviews()) - reviewsBefore;
  const pace =
    METRICS_AUTH_LIMITS.reviewBurstPerAddress + METRICS_AUTH_LIMITS.reviewsPerSecondPerAddress * elapsedS;
  // The scraper's own token is renewed at most once a minute (its TTL).
  const scraperRenewals = 1 + elapsedS / 60;
  const bound = Math.ceil(PEERS.length * pace + scraperRenewals);
  t.diagnostic(
    `${reviews} TokenReviews, ${scrapes.length} scrapes, flood answers ${JSON.stringify([...flood])} in ${elapsedS.toFixed(1)} s`,
  );
  assert.ok(
    reviews <= bound,
    `${reviews} TokenReviews for ${PEERS.length * PER_PEER} flood requests in ${elapsedS.toFixed(1)} s; the pace allows ${bound}`,
  );
  const child = stage.operator.child;
  assert.ok(child.exitCode === null && child.signalCode === null, 'the operator is still running');
});
