import { describe, expect, it } from 'vitest';
import { brokeText, timeoutSeconds, timeoutText, unreachableText } from '../../../src/turns/failure-text.js';

describe('failure texts for the model', () => {
  it('should give a timeout in seconds to one decimal place', () => {
    expect(timeoutSeconds(10_000)).toBe('10');
    expect(timeoutSeconds(400)).toBe('0.4');
    expect(timeoutSeconds(1250)).toBe('1.3');
    expect(timeoutSeconds(1234)).toBe('1.2');
  });

  it('should say after a timeout or a broken connection that the work may have been done', () => {
    expect(timeoutText('The tool a__b', 400)).toBe(
      'The tool a__b did not answer within 0.4 s. It may have done its work anyway; check before repeating anything that changes data.',
    );
    expect(brokeText('the API behind a__b')).toBe(
      'The connection to the API behind a__b broke during the call. It may have done its work anyway; check before repeating anything that changes data.',
    );
  });

  it('should say of an unreachable server that nothing was done', () => {
    expect(unreachableText('The tool server for a__b')).toBe(
      'The tool server for a__b could not be reached. Nothing was done; it may work if tried again later.',
    );
  });
});
