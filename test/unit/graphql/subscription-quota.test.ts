import { describe, expect, it } from 'vitest';
import { SubscriptionQuota } from '../../../src/graphql/subscription-quota.js';

describe('SubscriptionQuota', () => {
  it('should cap per socket, then per token, and give slots back on release and on close', () => {
    const q = new SubscriptionQuota<string>(3, 2);
    expect(q.acquire('t1', 's1', 'a')).toBeNull();
    expect(q.acquire('t1', 's1', 'b')).toBeNull();
    expect(q.acquire('t1', 's1', 'c')).toBe('PER_SOCKET');
    expect(q.acquire('t1', 's2', 'a')).toBeNull();
    expect(q.acquire('t1', 's2', 'b')).toBe('PER_TOKEN');
    expect(q.acquire('t2', 's3', 'a')).toBeNull();
    expect(q.openFor('t1')).toBe(3);
    q.release('s1', 'a');
    q.release('s1', 'a'); // twice is harmless
    expect(q.openFor('t1')).toBe(2);
    expect(q.acquire('t1', 's2', 'b')).toBeNull();
    q.releaseSocket('s2');
    expect(q.openFor('t1')).toBe(1);
    q.releaseSocket('s1');
    expect(q.openFor('t1')).toBe(0);
    expect(q.openFor('t2')).toBe(1);
  });
});
