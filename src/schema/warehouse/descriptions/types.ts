// The shapes of the descriptions (what each schema, table, view and function says), apart
// from the descriptions themselves so that each file can use them without importing the index.
/** One line per column: what it holds, its unit, its values. */
export type ColumnDescriptions = Readonly<Record<string, string>>;

export interface RelationDescription {
  /** What one row is; completes the heading "`schema.table`: ..." and starts the comment. */
  summary: string;
  /** Paragraphs shown before the column table (and in the comment). */
  description?: string;
  /**
   * Every column, one line each. In a schema with `sharedColumns`, the columns of EVERY_ROW and
   * SHARED_COLUMNS may be left out (they are described there); given here, the line replaces
   * the shared one for this table.
   */
  columns: ColumnDescriptions;
  /** Caveats shown after the column table (and in the comment). */
  notes?: string;
  /** Said of `T_as_of(at)` beside the rule, for a versioned table. */
  asOf?: string;
}

export interface ViewDescription extends RelationDescription {
  /** The columns that tell a row apart, for the heading (tables: read from their declaration). */
  key?: readonly string[];
  /** A materialized view (`COMMENT ON MATERIALIZED VIEW`). */
  materialized?: boolean;
  /** It has an as-of form, `<view>_as_of(at timestamptz)`, described by the rule (and `asOf`). */
  hasAsOf?: boolean;
}

export interface SchemaDescription {
  name: string;
  /** The heading: "## `name` schema: title". */
  title: string;
  /** The schema's comment, and the paragraphs under its heading. */
  description: string;
  /** Its tables carry the EVERY_ROW / SHARED_COLUMNS columns (app, gateway): they may leave them out. */
  sharedColumns?: boolean;
  /**
   * Its reference goes in a block of its own, `<!-- generated:tables:<name>:start -->` ...
   * `<!-- generated:tables:<name>:end -->`, inside the schema's hand-written section of
   * docs/warehouse.md (which has its heading and introduction), instead of the main block.
   */
  ownBlock?: boolean;
  /** By table name, in the order the reference shows them. Every table declared in src/schema/warehouse. */
  tables?: Readonly<Record<string, RelationDescription>>;
  /** By view name, in the order the reference shows them. Columns as the view returns them. */
  views?: Readonly<Record<string, ViewDescription>>;
  /**
   * By signature as in `COMMENT ON FUNCTION`, every argument named: `latest(at timestamptz)`,
   * `keep_version()`. Overloads are separate entries.
   */
  functions?: Readonly<Record<string, string>>;
}
