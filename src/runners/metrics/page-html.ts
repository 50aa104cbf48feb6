// The status page as HTML: the view model (page-model.ts) laid out, every string escaped (names,
// errors and URLs come from upstream and the warehouse: untrusted), its style and its one
// script inline and allowed by hash in the page's Content-Security-Policy, so nothing else can
// run or load even if a string got through: no asset from anywhere but tesync itself. Pure.
import { createHash } from 'node:crypto';
import type { BucketRow, CauseGroup, GroupRow, PageModel, QueuesModel, TimelineItem, Tone } from './page-model.ts';
import type { NotificationItem, NotificationsModel } from './page-notifications.ts';

/** Text for HTML: element content and double-quoted attribute values alike. */
export function esc(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = `
:root{--ok:#1f7a3a;--warn:#9a5b00;--bad:#b3261e;--idle:#5f6368;--line:#d7dbe0;--bg:#f6f7f9;--fg:#1b1f24;--muted:#5a6270}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
header{background:#fff;border-bottom:1px solid var(--line);padding:14px 24px}
header h1{margin:0 0 2px;font-size:20px}
header p{margin:0;color:var(--muted)}
body.stale header p.refresh::after{content:" (could not refresh: the page is out of date)";color:var(--bad)}
main{max-width:1280px;margin:0 auto;padding:12px 24px 40px}
section{background:#fff;border:1px solid var(--line);border-radius:8px;margin:16px 0;padding:12px 16px}
h2{font-size:16px;margin:2px 0 10px}
h2 small{font-weight:normal;color:var(--muted)}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-weight:600;color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.02em}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.nowrap{white-space:nowrap}
.cause td:nth-child(1){width:24%}.cause td:nth-child(2){width:9%}.cause td:nth-child(4){width:9%}
tr.why td{border-bottom:1px solid var(--line);padding-top:0;color:var(--fg);font-size:13px}
tr.has-why td{border-bottom:none}
.summary{display:flex;flex-wrap:wrap;gap:10px;margin-top:10px}
.badge{display:inline-block;border-radius:12px;padding:1px 9px;font-size:12px;font-weight:600;color:#fff;background:var(--idle);white-space:nowrap}
.tile{border:1px solid var(--line);border-radius:8px;padding:6px 12px;background:#fff}
.tile b{font-size:18px;display:block}
.ok{--tone:var(--ok)}.warn{--tone:var(--warn)}.bad{--tone:var(--bad)}.idle{--tone:var(--idle)}
.badge.ok,.badge.warn,.badge.bad,.badge.idle{background:var(--tone)}
.tile.ok b,.tile.warn b,.tile.bad b{color:var(--tone)}
.over{color:var(--bad);font-weight:600}
.muted{color:var(--muted)}
code,.mono{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12.5px;overflow-wrap:anywhere}
ul{margin:4px 0;padding-left:20px}
ol.timeline{list-style:none;margin:0;padding:0}
ol.timeline>li{border-left:4px solid var(--tone);padding:4px 10px;margin:0 0 8px;background:#fafbfc}
ol.timeline .when{color:var(--muted);font-size:12px}
dl.figures{display:flex;flex-wrap:wrap;gap:4px 18px;margin:4px 0}
dl.figures div{display:flex;gap:6px}dl.figures dt{color:var(--muted)}dl.figures dd{margin:0;font-variant-numeric:tabular-nums}
meter{width:120px;height:12px;vertical-align:middle}
.cause{margin:10px 0 14px}
.cause h3{font-size:14px;margin:0 0 4px}
a{color:#0b57d0}
`;

const SCRIPT = `(() => {
  const every = Number(document.body.dataset.refresh) * 1000;
  async function refresh() {
    if (document.hidden) return;
    try {
      const r = await fetch(location.pathname, { cache: 'no-store', headers: { accept: 'text/html' } });
      if (!r.ok) throw new Error(String(r.status));
      const doc = new DOMParser().parseFromString(await r.text(), 'text/html');
      for (const id of ['top', 'page']) {
        const fresh = doc.getElementById(id);
        const old = document.getElementById(id);
        if (fresh && old) old.replaceWith(document.adoptNode(fresh));
      }
      document.body.classList.remove('stale');
    } catch {
      document.body.classList.add('stale');
    }
  }
  if (every > 0) setInterval(refresh, every);
  document.addEventListener('visibilitychange', () => { if (!document.hidden) void refresh(); });
})();`;

const hash = (s: string) => `'sha256-${createHash('sha256').update(s).digest('base64')}'`;

/** What the page may load and run: its own style and script (by hash), requests to itself; nothing else. */
export const PAGE_CSP = [
  "default-src 'none'",
  `style-src ${hash(STYLE)}`,
  `script-src ${hash(SCRIPT)}`,
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const badge = (tone: Tone, text: string) => `<span class="badge ${tone}">${esc(text)}</span>`;

export function renderPage(m: PageModel): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${esc(m.title)}</title>
<style>${STYLE}</style>
</head>
<body data-refresh="${esc(m.refreshSeconds)}">
${header(m)}
<main id="page">
${groupsSection(m.groups)}
${timelineSection(m.timeline)}
${budgetSection(m.buckets, m.budgetNote)}
${failingSection(m.causes, m.failingTotal, m.failingShown)}
${notificationsSection(m.notifications, m.notificationsNote)}
${queuesSection(m.queues, m.queuesNote)}
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;
}

function header(m: PageModel): string {
  const tiles = m.summary.map((s) => `<div class="tile ${s.tone}" data-summary="${esc(s.label)}"><span class="muted">${esc(s.label)}</span><b>${esc(s.value)}</b></div>`).join('');
  return `<header id="top">
<h1>${esc(m.title)}</h1>
<p>Warehouse: <span class="mono">${esc(m.warehouse)}</span> · served by ${esc(m.servedBy)}</p>
<p class="refresh">Read at ${esc(m.generatedAt)}; refreshes itself every ${esc(m.refreshSeconds)} s. Read-only.</p>
<div class="summary">${tiles}</div>
</header>`;
}

function groupsSection(groups: readonly GroupRow[]): string {
  if (groups.length === 0) return `<section id="groups"><h2>Freshness per resource group</h2><p>Nothing synced yet.</p></section>`;
  const rows = groups
    .map((g) => {
      const why = g.reasons.length > 0 || g.lastError;
      const main = `<tr class="group${why ? ' has-why' : ''}" data-group="${esc(g.name)}" data-tone="${esc(g.tone)}">
<td class="nowrap"><b>${esc(g.name)}</b></td>
<td class="state">${badge(g.tone, g.state)}</td>
<td class="nowrap"><span class="${g.dataOver ? 'over' : ''}">${esc(g.dataAge)}</span> <span class="muted">limit ${esc(g.dataLimit)}</span></td>
<td>${esc(g.dataTime)}${g.lagging ? ` <span class="muted">oldest:</span> <span class="mono lagging">${esc(g.lagging)}</span>` : ''}</td>
<td>${esc(g.verdict)}</td>
<td class="nowrap"><span class="${g.confirmedOver ? 'over' : ''}">${esc(g.confirmed)}</span> <span class="muted">limit ${esc(g.confirmedLimit)}</span></td>
<td class="coverage nowrap${g.coverageOver ? ' over' : ''}">${esc(g.coverage)}</td>
<td>${esc(g.statuses)} <span class="muted">(${esc(g.resources)})</span></td>
</tr>`;
      if (!why) return main;
      const reasons = g.reasons.map((r) => `<li class="reason">${esc(r)}</li>`).join('');
      const error = g.lastError ? `<li>last error: <span class="mono">${esc(g.lastError)}</span></li>` : '';
      return `${main}\n<tr class="why" data-group="${esc(g.name)}"><td colspan="8"><ul>${reasons}${error}</ul><span class="muted">thresholds: ${esc(g.basis)}</span></td></tr>`;
    })
    .join('\n');
  return `<section id="groups">
<h2>Freshness per resource group <small>data age: by the data's own time, its oldest resource; confirmed: when tesync last fetched it or found it unchanged, its least recent resource; held: of the resources its lists promise, those the warehouse holds</small></h2>
<table>
<thead><tr><th>group</th><th>state</th><th>data age</th><th>oldest data time (UTC)</th><th>upstream says</th><th>confirmed</th><th>held <span class="muted">of promised</span></th><th>statuses (resources)</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
</section>`;
}

function timelineItem(t: TimelineItem): string {
  const figures = t.figures.length === 0 ? '' : `<dl class="figures">${t.figures.map(([k, v]) => `<div><dt>${esc(k)}</dt><dd>${esc(v)}</dd></div>`).join('')}</dl>`;
  const details = t.details.length === 0 ? '' : `<ul>${t.details.map((d) => `<li class="mono">${esc(d)}</li>`).join('')}</ul>`;
  const id = t.id ? ` <span class="muted mono">${esc(t.id)}</span>` : '';
  return `<li class="${t.tone} ${t.kind}" data-kind="${esc(t.kind)}"${t.id ? ` data-run="${esc(t.id)}"` : ''}><div class="when">${esc(t.at)} · ${esc(t.ago)}</div><b>${esc(t.title)}</b>${id}${figures}${details}</li>`;
}

function timelineSection(items: readonly TimelineItem[]): string {
  const body = items.length === 0 ? '<p>No run yet.</p>' : `<ol class="timeline">\n${items.map(timelineItem).join('\n')}\n</ol>`;
  return `<section id="timeline">
<h2>Runs <small>newest first, with contract changes and upstream rebindings between them</small></h2>
${body}
</section>`;
}

function bucketRow(b: BucketRow): string {
  const meter = b.meter ? `<meter min="0" max="${esc(b.meter.max)}" value="${esc(b.meter.value)}"></meter> ` : '';
  return `<tr data-bucket="${esc(b.bucket)}">
<td><b>${esc(b.bucket)}</b><br>${badge(b.tone, b.mode)}</td>
<td>${meter}${esc(b.remaining)}</td>
<td class="num">${esc(b.inFlight)}</td>
<td>${b.held ? esc(b.held) : '<span class="muted">no</span>'}</td>
<td class="num">${esc(b.window.requests)}</td>
<td class="num">${esc(b.window.tooMany)}</td>
<td>${esc(b.window.retryAfters)}</td>
<td class="num">${esc(b.window.failed)}</td>
<td>${esc(b.window.lastSeen)}</td>
</tr>`;
}

function budgetSection(buckets: readonly BucketRow[], note: string | null): string {
  return `<section id="budget">
<h2>Rate budget per bucket <small>now, as the budget every worker and sync shares holds it; counts over the last hour from sync.requests</small></h2>
${note ? `<p class="muted">${esc(note)}</p>` : ''}
<table>
<thead><tr><th>bucket</th><th>remaining now</th><th class="num">in flight</th><th>held</th><th class="num">requests (1 h)</th><th class="num">429s (1 h)</th><th>Retry-After waits (1 h)</th><th class="num">5xx / no answer (1 h)</th><th>last request</th></tr></thead>
<tbody>
${buckets.map(bucketRow).join('\n')}
</tbody>
</table>
</section>`;
}

function causeBlock(c: CauseGroup): string {
  const items = c.items
    .map(
      (i) => `<tr class="failing" data-resource="${esc(i.resource)}">
<td class="mono">${esc(i.resource)}</td>
<td>${esc(i.attempted)}${i.failures > 1 ? `<br><span class="muted">${esc(i.failures)} times in a row</span>` : ''}</td>
<td class="mono">${i.error ? esc(i.error) : ''}</td>
<td>${i.bodyHref ? `<a class="body-link" href="${esc(i.bodyHref)}">${esc(i.bodyNote)}</a>` : `<span class="muted">${esc(i.bodyNote)}</span>`}</td>
</tr>`,
    )
    .join('\n');
  return `<div class="cause" data-cause="${esc(c.cause)}">
<h3>${badge(c.tone, c.status)} ${esc(c.cause)} <span class="muted">(${esc(c.count)})</span></h3>
<table><thead><tr><th>resource</th><th>last tried</th><th>last error</th><th>body</th></tr></thead><tbody>
${items}
</tbody></table>
</div>`;
}

function failingSection(causes: readonly CauseGroup[], total: number, shown: number): string {
  const more = total > shown ? `<p class="muted">${esc(total - shown)} more failing resources not shown (the ${esc(shown)} most recently tried are).</p>` : '';
  const body = causes.length === 0 ? '<p>No failing resource.</p>' : causes.map(causeBlock).join('\n');
  return `<section id="failing">
<h2>Failing resources by cause <small>retried on the next walk; a body opens as plain text</small></h2>
${body}
${more}
</section>`;
}

function notificationItem(n: NotificationItem): string {
  const deliveries = n.deliveries.map((d) => `<li data-endpoint="${esc(d.endpoint)}">${badge(d.tone, d.status)} <span class="mono">${esc(d.endpoint)}</span> <span class="muted">${esc(d.detail)}</span></li>`).join('');
  return `<li class="${n.tone}" data-notification="${esc(n.id)}" data-type="${esc(n.type)}"><div class="when">${esc(n.at)} · ${esc(n.ago)} · <span class="mono">${esc(n.type)}</span></div>${esc(n.text)}${deliveries ? `<ul>${deliveries}</ul>` : ''}</li>`;
}

function notificationsSection(m: NotificationsModel | null, note: string | null): string {
  if (!m) return `<section id="notifications"><h2>Notifications</h2><p class="muted">${esc(note ?? 'None.')}</p></section>`;
  const list = (items: readonly NotificationItem[]) => `<ol class="timeline">${items.map(notificationItem).join('\n')}</ol>`;
  return `<section id="notifications">
<h2>Notifications <small>the last events told (only changes are), newest first, and their delivery to each endpoint</small></h2>
<p>Endpoints: <span class="mono">${esc(m.endpoints)}</span> · deliveries waiting: <b id="notify-pending">${esc(m.pending)}</b></p>
${m.dead.length > 0 ? `<h3 class="over">Dead: an endpoint gave up on these</h3><div id="notify-dead">${list(m.dead)}</div>` : ''}
${m.recent.length > 0 ? `<div id="notify-recent">${list(m.recent)}</div>` : '<p class="muted">Nothing told yet.</p>'}
</section>`;
}

function queuesSection(q: QueuesModel | null, note: string | null): string {
  if (!q) return `<section id="queues"><h2>Queues</h2><p class="muted">${esc(note ?? 'No queues.')}</p></section>`;
  const states = [...new Set(q.queues.flatMap((x) => x.counts.map(([s]) => s)))];
  const rows = q.queues
    .map((x) => {
      const count = (s: string) => x.counts.find(([k]) => k === s)?.[1] ?? 0;
      return `<tr data-queue="${esc(x.name)}"><td><b>${esc(x.name)}</b>${x.paused ? ` ${badge('warn', 'paused')}` : ''}</td>${states.map((s) => `<td class="num">${esc(count(s))}</td>`).join('')}</tr>`;
    })
    .join('\n');
  const schedules =
    q.schedules.length === 0
      ? '<p class="muted">No schedule registered.</p>'
      : `<table><thead><tr><th>schedule</th><th>pattern</th><th>next run</th></tr></thead><tbody>
${q.schedules.map((s) => `<tr data-schedule="${esc(s.id)}"><td>${esc(s.id)}</td><td class="mono">${esc(s.pattern)}</td><td>${esc(s.next)}</td></tr>`).join('\n')}
</tbody></table>`;
  return `<section id="queues">
<h2>Queues <small>${esc(q.where)}; workers connected: <span id="workers">${esc(q.workers)}</span></small></h2>
<table><thead><tr><th>queue</th>${states.map((s) => `<th class="num">${esc(s)}</th>`).join('')}</tr></thead><tbody>
${rows}
</tbody></table>
<h2>Schedules</h2>
${schedules}
</section>`;
}
