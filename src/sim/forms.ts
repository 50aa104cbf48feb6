// Response forms the seeds leave open. 'mixed' picks a variant deterministically per cell,
// document, item or row, so one response carries several forms at once.
import { choose } from './random.ts';
import type { AppNumberForm, ChartKeyField, ChartLinkField, GatewayRowToken, HistoryRowForm, HistoryTimeForm, SimForms } from './types.ts';

export const DEFAULT_FORMS: SimForms = {
  appNumber: 'metricValue',
  historyRows: 'arrays',
  historyTime: 'date',
  chartKeyField: 'key',
  // resolved per API when left at this default: see linkFieldFor
  chartLinkField: 'mixed',
  hostileLinks: false,
  gatewayRowToken: 'slug',
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
  return { forms: { ...state.forms, ...defined }, linkFieldSet };
}

export const APP_NUMBER_FORMS: readonly AppNumberForm[] = ['metricValue', 'number', 'string'];
export const HISTORY_ROW_FORMS: readonly HistoryRowForm[] = ['arrays', 'objects'];
export const HISTORY_TIME_FORMS: readonly HistoryTimeForm[] = ['date', 'timestamp', 'epochSeconds', 'epochMillis'];
export const CHART_KEY_FIELDS: readonly ChartKeyField[] = ['key', 'chartKey', 'id'];
export const CHART_LINK_FIELDS: readonly ChartLinkField[] = ['href', 'dataEndpoint', 'endpoint', 'links.data'];
export const GATEWAY_ROW_TOKENS: readonly GatewayRowToken[] = ['slug', 'token.slug', 'symbol'];

/** the concrete variant for one place: the configured form, or a seeded pick when 'mixed' */
export function pick<T extends string>(form: T | 'mixed', variants: readonly T[], seed: number, where: string): T {
  return form === 'mixed' ? choose(variants, seed, where) : form;
}

export function linkFieldFor(state: FormState, api: 'app' | 'gateway', seed: number, where: string): ChartLinkField {
  if (!state.linkFieldSet) return api === 'app' ? 'dataEndpoint' : 'href';
  return pick(state.forms.chartLinkField, CHART_LINK_FIELDS, seed, where);
}
