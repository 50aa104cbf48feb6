// Which Host the metrics port answers (issue 55 part 6), as pure rules: a Host is read only
// when it is positively a name, a dotted IPv4 or a bracketed IPv6 address with at most a port;
// the page answers loopback and the listed hosts; /metrics also any address; TE_STATUS_HOSTS is
// read with the same grammar and refused naming itself.
import { describe, expect, it } from 'vitest';
import { serveHosts } from '../../../src/cli/status-serve.ts';
import { loadConfig } from '../../../src/lib/config.ts';
import { readHostList, readHostName, showHostName, type HostName } from '../../../src/lib/host-names.ts';
import { hostAnswered } from '../../../src/runners/metrics/host-guard.ts';

const listed = (raw: string): HostName[] => {
  const r = readHostList(raw);
  if (!('hosts' in r)) throw new Error(`not a list: ${raw}`);
  return r.hosts;
};

describe('readHostName', () => {
  it.each([
    ['localhost', 'localhost'],
    ['LocalHost:9464', 'localhost:9464'],
    ['127.0.0.1', '127.0.0.1'],
    ['127.255.0.9:80', '127.255.0.9:80'],
    ['[::1]', '[::1]'],
    ['[0:0:0:0:0:0:0:1]:9464', '[::1]:9464'],
    ['[FD00::5]', '[fd00::5]'],
    ['status.example.com', 'status.example.com'],
    ['worker-2:9464', 'worker-2:9464'],
    ['10.0.0.5:65535', '10.0.0.5:65535'],
  ])('%s is %s', (raw, shown) => expect(showHostName(readHostName(raw)!)).toBe(shown));

  it.each([
    '',
    ' ',
    'user@localhost',
    'localhost@evil.example',
    'localhost.',
    '.localhost',
    'local host',
    'local%68ost',
    'under_score.example',
    '*.example.com',
    'localhost:',
    'localhost:0',
    'localhost:09464',
    'localhost:65536',
    'localhost:80:80',
    'localhost/x',
    'localhost?x',
    'localhost#x',
    '127.1',
    '127.0.0.01',
    '0x7f.0.0.1',
    '127.0.0.256',
    '2130706433',
    '1.2.3',
    '[::1',
    '::1',
    '[::1]x',
    '[fe80::1%25eth0]',
    '[v1.x]',
    '-bad.example',
    'bad-.example',
    `${'a'.repeat(64)}.example`,
    'ex\u0430mple.com',
  ])('%j is not a host', (raw) => expect(readHostName(raw)).toBeUndefined());
});

describe('hostAnswered', () => {
  const hosts = listed('status.example.com,worker:9464,10.9.8.7');
  it.each([
    // [Host lines, page?, metrics?]
    [['localhost:9464'], true, true],
    [['127.0.0.1'], true, true],
    [['127.3.2.1:1'], true, true],
    [['[::1]:9464'], true, true],
    [['status.example.com'], true, true],
    [['STATUS.example.com:443'], true, true],
    [['worker:9464'], true, true],
    [['worker:9465'], false, false],
    [['worker'], false, false],
    [['10.9.8.7:9464'], true, true],
    // A rebinding page's name: refused everywhere.
    [['rebind.attacker.example:9464'], false, false],
    [['example.org'], false, false],
    [['tesync.localhost'], false, false],
    [['localhost.'], false, false],
    // An address that is not loopback nor listed: not the page's, but a scraper's.
    [['10.0.0.5:9464'], false, true],
    [['[fd00::5]:9464'], false, true],
    // No Host, an empty one, two, userinfo, odd characters.
    [undefined, false, false],
    [[], false, false],
    [[''], false, false],
    [['localhost', 'evil.example'], false, false],
    [['localhost', 'localhost'], false, false],
    [['user@localhost'], false, false],
    [['localhost\u0000'], false, false],
  ] as [string[] | undefined, boolean, boolean][])('%j: page %s, /metrics %s', (values, page, metrics) => {
    expect(hostAnswered(values, 'page', hosts)).toBe(page);
    expect(hostAnswered(values, 'metrics', hosts)).toBe(metrics);
  });
});

describe('TE_STATUS_HOSTS', () => {
  it('unset: none besides loopback; a list read with its ports; a wrong entry names the variable and the entry', () => {
    expect(loadConfig({}).worker.statusHosts).toEqual([]);
    expect(loadConfig({ TE_STATUS_HOSTS: ' status.example.com , worker:9464,[fd00::5]:80,' }).worker.statusHosts.map(showHostName)).toEqual(['status.example.com', 'worker:9464', '[fd00::5]:80']);
    for (const wrong of ['*.example.com', 'user@host', 'http://status.example.com', 'a b', 'host:99999']) {
      expect(() => loadConfig({ TE_STATUS_HOSTS: `localhost,${wrong}` })).toThrow(new RegExp(`^TE_STATUS_HOSTS: ${JSON.stringify(wrong).replace(/[.*?/]/g, '\\$&')} is not a host name`));
    }
  });
});

describe('tesync status --serve: the host it is bound to', () => {
  it('answers the name or address --host gives, not every interface', () => {
    const list = listed('status.example.com');
    expect(serveHosts('127.0.0.1', list).map(showHostName)).toEqual(['status.example.com', '127.0.0.1']);
    expect(serveHosts('10.0.0.5', list).map(showHostName)).toEqual(['status.example.com', '10.0.0.5']);
    expect(serveHosts('fd00::5', []).map(showHostName)).toEqual(['[fd00::5]']);
    expect(serveHosts('my-host.lan', []).map(showHostName)).toEqual(['my-host.lan']);
    expect(serveHosts('0.0.0.0', list).map(showHostName)).toEqual(['status.example.com']);
    expect(serveHosts('::', []).map(showHostName)).toEqual([]);
  });
});
