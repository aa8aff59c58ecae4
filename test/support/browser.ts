/** Debian's chromium for the browser tests, driven by playwright-core; absent, the tests skip and say why. */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
if (!hasChromium)
  console.warn(`browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium)`);

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}

/** Opens the debugger page and signs in with `token`. */
export async function signInToDebugger(page: Page, serviceUrl: string, token: string): Promise<void> {
  await page.goto(`${new URL(serviceUrl).origin}/debugger`);
  await page.fill('#token', token);
  await page.click('button[type=submit]');
}
