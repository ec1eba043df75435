/**
 * CRI RPCs and the operation_type label each one carries in the upstream
 * runtime metrics (kubelet_runtime_operations_*; see upstream
 * pkg/kubelet/kuberuntime/instrumented_services.go).
 */
export const RUNTIME_OPERATIONS = {
  version: 'version',
  status: 'status',
  runPodSandbox: 'run_podsandbox',
  stopPodSandbox: 'stop_podsandbox',
  removePodSandbox: 'remove_podsandbox',
  podSandboxStatus: 'podsandbox_status',
  listPodSandbox: 'list_podsandbox',
  createContainer: 'create_container',
  startContainer: 'start_container',
  stopContainer: 'stop_container',
  removeContainer: 'remove_container',
  listContainers: 'list_containers',
  containerStatus: 'container_status',
  execSync: 'exec_sync',
  exec: 'exec',
  attach: 'attach',
  portForward: 'port_forward',
  containerStats: 'container_stats',
  listContainerStats: 'list_container_stats',
  podSandboxStats: 'podsandbox_stats',
  listPodSandboxStats: 'list_podsandbox_stats',
  updateRuntimeConfig: 'update_runtime_config',
  reopenContainerLog: 'reopen_container_log',
  getContainerEvents: 'get_container_events',
} as const;

export const IMAGE_OPERATIONS = {
  listImages: 'list_images',
  imageStatus: 'image_status',
  pullImage: 'pull_image',
  removeImage: 'remove_image',
  imageFsInfo: 'image_fs_info',
} as const;

export type RuntimeMethod = keyof typeof RUNTIME_OPERATIONS;
export type ImageMethod = keyof typeof IMAGE_OPERATIONS;
export type OperationType = (typeof RUNTIME_OPERATIONS)[RuntimeMethod] | (typeof IMAGE_OPERATIONS)[ImageMethod];
