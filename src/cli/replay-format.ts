// What `tesync replay` prints for a person: what it repeated, what it could not (each with its
// count, never left out in silence), and with --check the comparison, a table of differences
// per table and key, within the terminal's width (80 columns when not a terminal).
import type { Comparison } from '../replay/compare.ts';
import type { ReplayReport } from '../replay/replay.ts';
import { fitRows, fitText } from './fit-table.ts';

const n = (x: number) => x.toLocaleString('en-US');
const plural = (x: number, one: string, many = `${one}s`) => `${n(x)} ${x === 1 ? one : many}`;

/** Pure: the replay's account, `into` saying where it wrote. */
export function replayLines(r: ReplayReport, into: string, width: number): string[] {
  const w = r.writes;
  const lines = [
    `Replayed the archive into ${into} in ${(r.durationMs / 1000).toFixed(1)} s, no request sent:`,
    `  ${plural(r.bodies, 'body', 'bodies')} and the runs taken over as they are;`,
    `  ${plural(w.read + w.unchanged + w.confirmed, 'write')} repeated at their known times (${n(w.read)} read from bodies, ${n(w.unchanged)} unchanged by a marker, ${n(w.confirmed)} confirmed by a 304);`,
    `  ${plural(r.refused.again + r.refused.nowWritten, 'refused read')} read again at their receipt: ${n(r.refused.nowWritten)} understood now and written, ${n(r.refused.again)} refused again;`,
    `  the daily archives filled at ${plural(r.runEnds, 'run end')}.`,
  ];
  const u = r.unreplayable;
  const left: string[] = [];
  if (u.bodiesUnrecorded) left.push(`  ${plural(u.bodiesUnrecorded, 'archived body', 'archived bodies')} no write record names (received before sync.writes began, or by a try that recorded none): not replayed`);
  if (u.recordsMissingBodies) left.push(`  ${plural(u.recordsMissingBodies, 'write')} naming a body the archive no longer holds (removed outside tesync)`);
  if (u.triesUnwritten) left.push(`  ${plural(u.triesUnwritten, 'try', 'tries')} that read bodies and wrote nothing (failed, or superseded by a newer response): not repeated`);
  if (u.unknownJobs) left.push(`  ${plural(u.unknownJobs, 'write')} of a job this release no longer has`);
  if (u.gaps) left.push(`  ${plural(u.gaps, 'request')} no archived body answers, e.g. ${u.firstGaps.join(', ')}`);
  if (u.notWritten) left.push(`  ${plural(u.notWritten, 'write')} that did not write again: ${u.firstNotWritten.map((m) => `${m.resource} (${m.status}: ${m.why})`).join('; ')}`);
  if (u.versionsWithoutBody) left.push(`  (${plural(u.versionsWithoutBody, 'row or version', 'rows and versions')} carry no archived body: written by a marker's skip or a 304, repeated from their write record)`);
  if (r.settingsAssumed) lines.push(`  ${plural(r.settingsAssumed, 'write')} of runs that recorded no settings (before 2026-12-07) read with this configuration's.`);
  lines.push(...(left.length > 0 ? ['Not replayed, with their counts:', ...left] : ['Nothing left out: every write recorded was repeated.']));
  return fitText(lines.join('\n'), width).split('\n');
}

/** Pure: the comparison, a table of its differences per table and key. */
export function comparisonLines(c: Comparison, runEnds: number, width: number): string[] {
  const what = `${plural(c.tables, 'table')} of app and gateway (tables, histories, daily archives)`;
  if (c.equal) return fitText(`Compared ${what}, and T_as_of at ${plural(runEnds, 'run end')} of the tables that differ (none): equal.`, width).split('\n');
  const text = fitText(`Compared ${what}: ${plural(c.differing.length + c.onlyIn.length, 'table')} differ.`, width).split('\n');
  for (const o of c.onlyIn) text.push('', `${o.table}: in the ${o.in} only`);
  for (const d of c.differing) {
    const counts = [d.changed ? `${n(d.changed)} changed` : '', d.missing ? `${n(d.missing)} missing from the replay` : '', d.extra ? `${n(d.extra)} only in the replay` : ''].filter(Boolean);
    text.push('', ...fitText(`${d.table}: ${counts.join(', ')}`, width).split('\n'));
    const rows = c.differences
      .filter((x) => x.table === d.table)
      .map((x) => ({ difference: x.kind === 'changed' ? `changed: ${x.columns.join(', ')}` : x.kind === 'missing' ? 'missing from the replay' : 'only in the replay', key: x.key }));
    if (rows.length > 0) text.push(...fitRows(rows, width - 2).text.trimEnd().split('\n').map((l) => `  ${l}`));
    const shown = rows.length;
    const all = d.changed + d.missing + d.extra;
    if (all > shown) text.push(`  ... and ${n(all - shown)} more (--json lists the first ${n(shown)} as well)`);
  }
  if (c.asOf.length > 0) {
    const byTable = new Map<string, number>();
    for (const a of c.asOf) byTable.set(a.table, (byTable.get(a.table) ?? 0) + 1);
    text.push('', ...fitText(`T_as_of differs at: ${[...byTable].map(([t, k]) => `${t} (${plural(k, 'run end')} of ${n(runEnds)})`).join(', ')}.`, width).split('\n'));
  }
  return text;
}
