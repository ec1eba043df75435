import { createLogger, type Logger } from '../../src/common/logger.js';

/** A JSON logger (info and up) whose records the test can read. */
export function captureLogger(): { logger: Logger; records: Record<string, unknown>[] } {
  const records: Record<string, unknown>[] = [];
  const logger = createLogger({
    format: 'json',
    verbosity: 0,
    destination: { write: (line: string) => void records.push(JSON.parse(line) as Record<string, unknown>) },
  });
  return { logger, records };
}
