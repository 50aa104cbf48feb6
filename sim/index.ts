// The bundled upstream simulator: both APIs of the seeds on one loopback port, with every
// open response form, rate limits, scripted answers and faults. Used by tests and `tesync demo`.
export { startSimulator } from './server.ts';
export type {
  BucketLimit,
  BucketName,
  KeyGrant,
  OutageWindow,
  RateLimitFields,
  RateLimitOptions,
  RecordedRequest,
  ScriptedResponse,
  SimFaults,
  SimForms,
  SimLosses,
  SimOmission,
  SimPaging,
  PageForm,
  PagingSign,
  SimOptions,
  SimOutage,
  SimRedirect,
  Simulator,
  AppNumberForm,
  HistoryRowForm,
  HistoryTimeForm,
  ChartKeyField,
  ChartLinkField,
  GatewayRowToken,
  HistoryStreams,
  SimHostile,
  HostilePlace,
  HostileChar,
  SimEcho,
  EchoPlace,
  EchoForm,
} from './types.ts';
export type * from './dataset-types.ts';
export { ANCHOR_DATE } from './calendar.ts';
export { DATA_ROUTE_KINDS, HISTORY_ALL_FORMS } from './forms.ts';
export { CUT_LIST_LENGTH, REMOVED_POINT_INDEX, REMOVED_SECTION, REMOVED_TIMEFRAME, SIM_OMISSIONS, removedHistoryDate } from './losses.ts';
export { ALIAS_PARAM } from './detours.ts';
export { RATE_LIMIT_FIELDS } from './rate-limit.ts';
export { compareDecimal, isCanonicalDecimal } from './decimal.ts';
export { ALL_PAGING_SIGNS, PAGE_FORMS, PAGE_TOTALS, PAGED_ROUTES, PAGING_SIGNS } from './paging.ts';
export { HOSTILE_CHARS, HOSTILE_PLACES, hostileChar, hostileEscape, hostileText } from './hostile.ts';
export { ECHO_FORMS, ECHO_PLACES, echoForm } from './echoes.ts';
