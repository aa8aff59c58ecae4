/**
 * A re-discovery skips a description whose fingerprint is unchanged, and the converter's version
 * (`CONVERSION_VERSION`) is part of that fingerprint (`discovery/fingerprint.ts`). So a change to
 * what parsing and conversion make of a text must come with a new version, or connections would
 * keep the old result. This test holds the digest of what the fixtures convert to, per version:
 * when it fails, either the change was not meant (a bug), or bump `CONVERSION_VERSION` and record
 * the new digest under the new version.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONVERSION_VERSION, runConvertJob } from '../../../src/openapi/convert-job.js';

const RECORDED: Record<number, string> = {
  1: '26b29e278df8b5bb644e5ea5b592825b85a86a3c0a5fa7d2fc6fe170006d9e92',
  2: '6fb3a9648003988e2230b90d1beb6c9b8bc8f3b80a60cd8b3e65dae9dfe59d63',
};

const fixtures = resolve(import.meta.dirname, '../../fixtures/openapi');
/** Named, not listed from the folder: a new fixture is not a new converter. */
const FILES = [
  'oai-petstore-expanded-v3.0.json',
  'oai-petstore-minimal-v2.0.yaml',
  'oai-petstore-v2.0.json',
  'oai-petstore-v3.0.yaml',
  'swaggerapi-petstore-v2.yaml',
  'swaggerapi-petstore3.yaml',
  'twilio-chat-v3.yaml',
  'twilio-content-v1.json',
];

describe('the converter version', () => {
  it('should change whenever what the fixtures convert to changes', () => {
    const digest = createHash('sha256');
    for (const file of FILES) {
      const text = readFileSync(join(fixtures, file), 'utf8');
      const outcome = runConvertJob({
        text,
        descriptionUrl: `https://descriptions.example.com/${file}`,
        baseUrl: null,
      });
      digest.update(file).update(JSON.stringify(outcome));
    }
    expect(digest.digest('hex')).toBe(RECORDED[CONVERSION_VERSION]);
  });
});
