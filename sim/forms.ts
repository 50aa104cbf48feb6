// Response forms the seeds leave open. 'mixed' picks a variant deterministically per cell,
// document, item, row or token, so one response carries several forms at once. addedFields
// is applied to any route's data in one place (withAddedField, called by the server).
import { choose } from './random.ts';
import type { AppNumberForm, ChartKeyField, ChartLinkField, GatewayRowToken, HistoryAllForm, HistoryRowForm, HistoryTimeForm, SimForms } from './types.ts';

export const DEFAULT_FORMS: SimForms = {
  appNumber: 'metricValue',
  historyRows: 'arrays',
  historyTime: 'date',
  chartKeyField: 'key',
  // resolved per API when left at this default: see linkFieldFor
  chartLinkField: 'mixed',
  hostileLinks: false,
  gatewayRowToken: 'slug',
  historyAll: 'list',
  chartLabels: false,
  addedFields: {},
  duplicatedKeys: {},
};

export interface FormState {
  forms: SimForms;
  /** whether chartLinkField was set explicitly (else each API uses its documented default) */
  linkFieldSet: boolean;
}

export function initialForms(partial: Partial<SimForms> | undefined): FormState {
  return mergeForms({ forms: { ...DEFAULT_FORMS }, linkFieldSet: false }, partial ?? {});
}

/** merges; `chartLinkField: undefined` given explicitly goes back to each API's default */
export function mergeForms(state: FormState, partial: Partial<SimForms>): FormState {
  const defined = Object.fromEntries(Object.entries(partial).filter(([, v]) => v !== undefined)) as Partial<SimForms>;
  const linkFieldSet = 'chartLinkField' in partial ? partial.chartLinkField !== undefined : state.linkFieldSet;
  const forms = { ...state.forms, ...defined };
  // a copy: a caller changing its map afterwards must not change what is served
  forms.addedFields = { ...forms.addedFields };
  forms.duplicatedKeys = { ...forms.duplicatedKeys };
  return { forms, linkFieldSet };
}

export const APP_NUMBER_FORMS: readonly AppNumberForm[] = ['metricValue', 'number', 'string'];
export const HISTORY_ROW_FORMS: readonly HistoryRowForm[] = ['arrays', 'objects'];
export const HISTORY_TIME_FORMS: readonly HistoryTimeForm[] = ['date', 'timestamp', 'epochSeconds', 'epochMillis'];
export const CHART_KEY_FIELDS: readonly ChartKeyField[] = ['key', 'chartKey', 'id'];
export const CHART_LINK_FIELDS: readonly ChartLinkField[] = ['href', 'dataEndpoint', 'endpoint', 'links.data'];
export const GATEWAY_ROW_TOKENS: readonly GatewayRowToken[] = ['slug', 'token.slug', 'symbol'];
export const HISTORY_ALL_FORMS: readonly HistoryAllForm[] = ['list', 'column', 'columnUntyped', 'nested', 'keyed', 'ambiguous'];

export { DATA_ROUTE_KINDS, type DataRouteKind } from './route-kinds.ts';

/** the value of every added field: plainly text, so it cannot pass for a number or a date */
export const ADDED_FIELD_VALUE = 'added';

/** the concrete variant for one place: the configured form, or a seeded pick when 'mixed' */
export function pick<T extends string>(form: T | 'mixed', variants: readonly T[], seed: number, where: string): T {
  return form === 'mixed' ? choose(variants, seed, where) : form;
}

export function linkFieldFor(state: FormState, api: 'app' | 'gateway', seed: number, where: string): ChartLinkField {
  if (!state.linkFieldSet) return api === 'app' ? 'dataEndpoint' : 'href';
  return pick(state.forms.chartLinkField, CHART_LINK_FIELDS, seed, where);
}

/**
 * `data` with `field` added to each top-level object (each item of an array, or the object
 * itself). New objects: `data` may be the dataset's own cached values, which must not change.
 * A member already named `field` keeps its value, so the truth is never overwritten.
 */
export function withAddedField(data: unknown, field: string | undefined): unknown {
  if (field === undefined || field === '') return data;
  const add = (v: unknown): unknown => (isPlainObject(v) && !Object.hasOwn(v, field) ? { ...v, [field]: ADDED_FIELD_VALUE } : v);
  return Array.isArray(data) ? data.map(add) : add(data);
}

/**
 * The body's text with `key` named twice in the first object that has it: `"key":"0",` goes
 * in just before the member. Text, because no JSON writer writes a key twice.
 */
export function withDuplicatedKey(body: string, key: string | undefined): string {
  if (key === undefined || key === '') return body;
  const member = `${JSON.stringify(key)}:`;
  const at = body.indexOf(member);
  return at < 0 ? body : `${body.slice(0, at)}${member}"0",${body.slice(at)}`;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
