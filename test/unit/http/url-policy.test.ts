/**
 * Issue 25, item 5: the address rule at save time (`checkUrl`) and at send time
 * (`OutboundClient.checkUrl`) is one function, `judgeUrl`; this table holds both to the same answer.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { OutboundClient, OutboundError } from '../../../src/http/outbound.js';
import { checkUrl, compileUrlPolicy, judgeUrl, type UrlPolicy } from '../../../src/http/url-policy.js';

const clients: OutboundClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

function sendTime(url: string, policy: UrlPolicy): string {
  const c = new OutboundClient({ allowHosts: [...policy.allowHosts], allowLoopback: policy.allowLoopback });
  clients.push(c);
  try {
    c.checkUrl(url);
    return 'ok';
  } catch (err) {
    if (err instanceof OutboundError) return err.code;
    throw err;
  }
}

const none: UrlPolicy = { allowHosts: [], allowLoopback: false };
const loopback: UrlPolicy = { allowHosts: [], allowLoopback: true };
const listed = (...allowHosts: string[]): UrlPolicy => ({ allowHosts, allowLoopback: false });

/** [url, policy, expected verdict: 'ok' or the refusal's reason] */
const TABLE: [string, UrlPolicy, string][] = [
  // the inputs of the issue
  ['http://127.0.0.2/', loopback, 'ok'],
  ['http://api.localhost/', loopback, 'ok'],
  ['http://api.localhost/', none, 'HTTP'],
  ['https://api.localhost/', none, 'ADDRESS'],
  ['http://example.com/', listed('example.com:80'), 'ok'],
  ['http://example.com:80/', listed('example.com:80'), 'ok'],
  ['https://example.com/', listed('example.com:443'), 'ok'],
  ['http://example.com:8080/', listed('example.com:80'), 'HTTP'],
  ['http://example.com:8080/', listed('example.com:8080'), 'ok'],
  ['http://example.com/', listed('example.com'), 'ok'],
  ['http://example.com:9/', listed('example.com'), 'ok'],
  // loopback
  ['http://localhost:8080/mcp', loopback, 'ok'],
  ['http://localhost:8080/mcp', none, 'HTTP'],
  ['https://localhost/', none, 'ADDRESS'],
  ['https://localhost/', loopback, 'ok'],
  ['http://127.0.0.1:9/', loopback, 'ok'],
  ['http://127.1/', loopback, 'ok'],
  ['https://127.0.0.2/', none, 'ADDRESS'],
  ['http://[::1]:9/', loopback, 'ok'],
  ['http://[::ffff:127.0.0.1]/', loopback, 'ok'],
  ['http://10.0.0.1/', loopback, 'HTTP'],
  ['https://10.0.0.1/', loopback, 'ADDRESS'],
  ['http://api.example.com/', loopback, 'HTTP'],
  // IP literals
  ['https://8.8.8.8/', none, 'ok'],
  ['https://10.0.0.1/', none, 'ADDRESS'],
  ['https://169.254.169.254/latest/meta-data/', none, 'ADDRESS'],
  ['https://2130706433/', none, 'ADDRESS'],
  ['https://0x7f.1/', none, 'ADDRESS'],
  ['https://[fd00:ec2::254]/', none, 'ADDRESS'],
  ['https://[2001:4860:4860::8888]/', none, 'ok'],
  ['http://10.0.0.1/', listed('10.0.0.1'), 'ok'],
  ['http://[fd00::1]:8080/', listed('[fd00::1]:8080'), 'ok'],
  ['http://[fd00:0::1]/', listed('[fd00::1]'), 'ok'],
  ['http://[fd00::1]:8081/', listed('[fd00::1]:8080'), 'HTTP'],
  // userinfo, schemes, malformed
  ['https://alice:s3cr3t@api.example.com/', none, 'CREDENTIALS'],
  ['http://alice@example.com/', listed('example.com'), 'CREDENTIALS'],
  ['ftp://files.example.com/x', none, 'SCHEME'],
  ['file:///etc/passwd', none, 'SCHEME'],
  ['/relative/path', none, 'INVALID'],
  ['not a url', none, 'INVALID'],
  // spelling: trailing dots, case, IDN
  ['http://example.com./', listed('example.com'), 'ok'],
  ['http://example.com/', listed('example.com.'), 'ok'],
  ['http://localhost./', loopback, 'ok'],
  ['http://EXAMPLE.com/', listed('example.COM'), 'ok'],
  ['https://API.Example.com/', none, 'ok'],
  ['http://bücher.example/', listed('xn--bcher-kva.example'), 'ok'],
  ['http://xn--bcher-kva.example/', listed('bücher.example'), 'ok'],
  ['http://bücher.example/', none, 'HTTP'],
];

describe('judgeUrl: one rule at save time and at send time (issue 25, item 5)', () => {
  it.each(TABLE)('%s with %j is %s, at save time and at send time alike', (url, policy, expected) => {
    const verdict = judgeUrl(url, compileUrlPolicy(policy));
    expect(verdict.ok ? 'ok' : verdict.reason).toBe(expected);
    const saved = checkUrl(url, policy);
    const sent = sendTime(url, policy);
    expect(saved.ok).toBe(expected === 'ok');
    expect(sent === 'ok').toBe(expected === 'ok');
    if (expected === 'ADDRESS') expect(sent).toBe('ADDRESS_REFUSED');
    else if (expected !== 'ok') expect(sent).toBe('URL_REFUSED');
  });

  it('should keep the save-time rules of the field itself: no fragment, and https for baseUrl', () => {
    expect(checkUrl('https://api.example.com/#x', none)).toMatchObject({ ok: false, code: 'URL_INVALID' });
    expect(checkUrl('http://example.com/', listed('example.com'), { httpsOnly: true })).toMatchObject({
      ok: false,
      code: 'URL_REFUSED',
      message: 'must be an https:// address',
    });
  });

  it('should refuse an allow-list entry that is not a host', () => {
    expect(() => compileUrlPolicy(listed('http://example.com'))).toThrow(TypeError);
    expect(() => compileUrlPolicy(listed('example.com:80:80'))).toThrow(TypeError);
  });
});
