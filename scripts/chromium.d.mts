import type { BrowserContext } from 'playwright-core';

export declare const CHROMIUM_PATH: string;
export declare const CHROMIUM_FLAGS: string[];
export declare function launchChromium(options?: { width?: number; height?: number; colorScheme?: 'dark' | 'light' }): Promise<{ context: BrowserContext; close(): Promise<void> }>;
