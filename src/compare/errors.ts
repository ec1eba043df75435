/** Errors of kubelet-ts-compare. Each message names the source and says what to do. */
import { KubeletTsError } from '../common/errors.js';

export class CompareError extends KubeletTsError {
  override readonly code: string = 'KTS_ERR_COMPARE';
}

/** A /metrics URL could not be scraped (connection, TLS, HTTP status). */
export class ScrapeError extends CompareError {
  override readonly code = 'KTS_ERR_COMPARE_SCRAPE';
}

/** The source serves Prometheus text but no kubelet metrics. */
export class NotAKubeletError extends CompareError {
  override readonly code = 'KTS_ERR_COMPARE_NOT_A_KUBELET';
}

/** A metric the comparison needs is absent on one or more sources. */
export class MetricMissingError extends CompareError {
  override readonly code = 'KTS_ERR_COMPARE_METRIC_MISSING';
}

/** A source argument or a snapshot file is malformed. */
export class SourceError extends CompareError {
  override readonly code = 'KTS_ERR_COMPARE_SOURCE';
}
