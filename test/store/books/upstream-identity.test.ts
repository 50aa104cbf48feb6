import { describe, expect, it } from 'vitest';
import { describeUpstream, identityFromText, sameUpstream, simulatorIdentity, upstreamIdentity } from '../../../src/store/books/upstream-identity.ts';

describe('upstream identity', () => {
  it('is scheme, host, port and path', () => {
    expect(upstreamIdentity('https://App.Example.COM:8443/te/api')).toEqual({
      kind: 'url',
      upstream: 'https://app.example.com:8443/te/api',
      scheme: 'https',
      host: 'app.example.com',
      port: 8443,
      path: '/te/api',
    });
  });

  it('fills in the default port, and leaves it out of the text', () => {
    expect(upstreamIdentity('https://app.example.com')).toMatchObject({ upstream: 'https://app.example.com', port: 443, path: '' });
    expect(upstreamIdentity('http://app.example.com')).toMatchObject({ upstream: 'http://app.example.com', port: 80 });
    expect(sameUpstream(upstreamIdentity('https://app.example.com:443'), upstreamIdentity('https://app.example.com'))).toBe(true);
    expect(sameUpstream(upstreamIdentity('http://app.example.com:80/'), upstreamIdentity('http://app.example.com'))).toBe(true);
  });

  it('ignores trailing slashes, not the path', () => {
    expect(upstreamIdentity('https://gw.example.com/v2/').upstream).toBe('https://gw.example.com/v2');
    expect(upstreamIdentity('https://gw.example.com///').upstream).toBe('https://gw.example.com');
    expect(sameUpstream(upstreamIdentity('https://gw.example.com/a'), upstreamIdentity('https://gw.example.com/b'))).toBe(false);
  });

  it('never holds a key, userinfo, query or fragment', () => {
    const id = upstreamIdentity('https://user:s3cr3t-pass@app.example.com/base?api_key=canary_key_123&x=1#frag');
    expect(id).toMatchObject({ upstream: 'https://app.example.com/base', host: 'app.example.com', path: '/base' });
    expect(JSON.stringify(id)).not.toMatch(/user|s3cr3t|canary_key_123|api_key|frag|\?/);
  });

  it('tells scheme, host and port apart', () => {
    const a = upstreamIdentity('http://127.0.0.1:41000');
    expect(sameUpstream(a, upstreamIdentity('http://127.0.0.1:41001'))).toBe(false);
    expect(sameUpstream(a, upstreamIdentity('https://127.0.0.1:41000'))).toBe(false);
    expect(sameUpstream(a, upstreamIdentity('http://localhost:41000'))).toBe(false);
    expect(sameUpstream(a, upstreamIdentity('http://127.0.0.1:41000/'))).toBe(true);
  });

  it('the simulator is one upstream, whatever its port', () => {
    expect(sameUpstream(simulatorIdentity(), simulatorIdentity())).toBe(true);
    expect(sameUpstream(simulatorIdentity(), upstreamIdentity('http://127.0.0.1:41000'))).toBe(false);
    expect(identityFromText('simulator')).toEqual(simulatorIdentity());
    expect(identityFromText('http://127.0.0.1:41000')).toEqual(upstreamIdentity('http://127.0.0.1:41000'));
  });

  it('reads for people', () => {
    expect(describeUpstream(upstreamIdentity('https://app.example.com/'))).toBe('https://app.example.com');
    expect(describeUpstream('simulator')).toBe("tesync demo's bundled simulator");
    expect(describeUpstream(null)).toMatch(/did not record/);
  });
});
