/** A Go duration string in a KubeletConfiguration file, parsed to milliseconds. */
import * as z from 'zod';
import { parseDuration } from '../../common/duration.js';
import { errorMessage } from '../../common/error-message.js';

export const durationString = z
  .string({ error: 'expected a duration string such as "20s" or "1m30s"' })
  .superRefine((value, ctx) => {
    try {
      parseDuration(value);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: errorMessage(err) });
    }
  })
  .transform((value) => parseDuration(value));
