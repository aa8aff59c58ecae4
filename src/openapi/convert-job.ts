/**
 * The CPU-heavy part of reading a description, as one job over plain data: parse the text (JSON
 * or YAML) and convert it. Runs in a worker thread (`pool.ts`); pure apart from that.
 */
import { AppError } from '../errors.js';
import { convertDescription, type ConversionResult } from './convert.js';
import { parseDescription } from './load.js';
import type { UrlPolicy } from '../http/url-policy.js';

/**
 * The version of what a job makes of a text. Bump it with any change to parsing or conversion that
 * changes a result: a re-discovery skips an unchanged description only while this is the same
 * (`discovery/fingerprint.ts`). `test/unit/openapi/conversion-version.test.ts` fails when the
 * results of its fixtures change and this did not.
 */
export const CONVERSION_VERSION = 2;

export interface ConvertJob {
  text: string;
  /** The address the text was fetched from, or `null` for text given directly. */
  descriptionUrl: string | null;
  /** The connection's `baseUrl` override. */
  baseUrl: string | null;
  /** The outbound policy, which decides whether a base address is callable (`ConvertOptions.urlPolicy`). */
  urlPolicy?: UrlPolicy;
}

export interface ConvertedDescription {
  format: 'json' | 'yaml';
  /** The text's size in UTF-8 bytes. */
  bytes: number;
  conversion: ConversionResult;
}

/** What crosses the thread boundary: a result, or an `AppError` as its code and message. */
export type JobOutcome =
  { ok: true; value: ConvertedDescription } | { ok: false; code: string | null; message: string };

export function runConvertJob(job: ConvertJob): JobOutcome {
  try {
    const parsed = parseDescription(job.text);
    const conversion = convertDescription(
      parsed.document,
      job.descriptionUrl,
      job.baseUrl,
      job.urlPolicy === undefined ? {} : { urlPolicy: job.urlPolicy },
    );
    return { ok: true, value: { format: parsed.format, bytes: parsed.bytes, conversion } };
  } catch (error) {
    if (error instanceof AppError) return { ok: false, code: error.code, message: error.message };
    // A bug of ours: the caller logs it as internal, without the description's text.
    return { ok: false, code: null, message: error instanceof Error ? error.message : String(error) };
  }
}
