import EarshotContract
import EarshotALSA
import EarshotDBus
import FoundationEssentials
import SessionCore

/// Keeping the session true: route changes from the devices and the ALSA configuration,
/// and media-services resets from the capture service leaving and coming back.
extension SessionService {
    static let captureBusName = CaptureContract.busName

    func startFollowingRoutes() throws {
        let files = ALSAConfiguration.filesInUse(environment: settings.environment) + [ALSAConfiguration.deviceDirectory]
        let directories = [ALSAConfiguration.deviceDirectory]
        let watcher: any RouteChangeSource
        if settings.routeWatch == "poll" {
            logger.info("looking for route changes every \(RoutePoller.interval)")
            watcher = RoutePoller(files: files, directories: directories)
        } else {
            do {
                let inotify = try RouteWatcher(files: files, directories: directories)
                logger.info("watching \(inotify.watchCount) directories for route changes")
                watcher = inotify
            } catch where settings.routeWatch == "auto" {
                logger.warning("cannot watch for route changes with inotify (\(error)); looking every \(RoutePoller.interval) instead")
                watcher = RoutePoller(files: files, directories: directories)
            }
        }
        watcher.start { [weak self] in
            guard let self else { return }
            let noticed = ContinuousClock.now
            Task { await self.worker.run { self.rescan(noticed: noticed) } }
        }
        routeWatcher.withLock { $0 = watcher }
    }

    /// Rescans the inputs after a change on disk; a change a client could notice gives
    /// `RouteChanged` and, with `KeepEnforced`, a re-apply. Call only on the worker.
    func rescan(noticed: ContinuousClock.Instant) {
        let inputs = InputScanner.scan(previous: state.withLock { $0.inputs })
        let change = state.withLock { state -> (RouteChangeReason, AppliedState)? in
            let previous = state.inputs
            state.inputs = inputs
            guard let reason = RouteChangeReason.classify(previous: previous, current: inputs,
                                                          category: state.desired.configuration.category) else { return nil }
            return (reason, state.applied)
        }
        guard let (reason, previousRoute) = change else { return }
        let delay = noticed.duration(to: .now)
        let names = inputs.isEmpty ? "none" : inputs.map(\.name).joined(separator: ", ")
        logger.info("route change: \(reason.rawValue), \(delay) after the change on disk; inputs: \(names)")
        if !previousRoute.input.isEmpty, !inputs.contains(where: { $0.name == previousRoute.input }) {
            // A vanished input is no longer in force, whether or not a re-apply finds another.
            state.withLock { state in
                state.applied.input = ""
                state.applied.channels = 0
            }
        }
        emit(Manager.routeChanged, [.string(reason.rawValue), SessionValues.route(previousRoute, mixer: state.withLock { $0.mixerView })])
        if state.withLock({ $0.keepEnforced }) {
            reapply("routeChange")
        } else {
            publish()
        }
    }

    /// Follows the capture service's name: leaving and coming back is a media-services
    /// reset.
    func startFollowingCapture() async throws {
        let owners = try await connection.watchNameOwner(Self.captureBusName)
        tasks.run { [weak self] in
            for await owner in owners {
                guard let self else { return }
                await self.worker.run { self.captureOwnerChanged(owner) }
            }
        }
    }

    private func captureOwnerChanged(_ owner: String?) {
        let reset = state.withLock { state -> Bool in
            if owner == nil {
                state.captureLost = state.captureSeen
                return false
            }
            defer {
                state.captureSeen = true
                state.captureLost = false
            }
            return state.captureLost
        }
        if owner == nil, state.withLock({ $0.captureLost }) { logger.info("the capture service left the bus") }
        guard reset else { return }
        logger.info("media services reset: the capture service is back as \(owner ?? "")")
        emit(Manager.mediaServicesReset)
        if state.withLock({ $0.keepEnforced }) { reapply("mediaServicesReset") }
    }
}
