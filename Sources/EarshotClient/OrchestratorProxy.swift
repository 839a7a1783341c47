import ContractCore
import EarshotContract
import EarshotDBus

private typealias RecordKeys = OrchestratorContract.Manager.Keys

/// A `RecordPiece` request (org.earshot.Orchestrator1): prompt, capture, store, confirm.
@dynamicMemberLookup
public struct RecordPieceRequest: Sendable {
    public var title: String
    public var prompt: String?
    public var maxDurationMs: UInt32?
    public var endOnSilenceMs: UInt32?
    public var samplingRate: UInt32?
    public var bitsPerSample: UInt32?
    /// The lines the HMI shows while it records.
    public var displayText1: String?
    public var displayText2: String?
    public var outliveOwner = false
    /// The piece's metadata, passed on to `Drop`; its fields are also this request's
    /// (`request.tempo`).
    public var metadata = PieceMetadata()

    public init(title: String, prompt: String? = nil, maxDurationMs: UInt32? = nil) {
        self.title = title
        self.prompt = prompt
        self.maxDurationMs = maxDurationMs
    }

    public subscript<Value>(dynamicMember field: WritableKeyPath<PieceMetadata, Value>) -> Value {
        get { metadata[keyPath: field] }
        set { metadata[keyPath: field] = newValue }
    }

    var values: [String: DBusValue] {
        var values: [String: DBusValue] = [RecordKeys.title.name: .string(title)]
        values[RecordKeys.prompt] = prompt.map(DBusValue.string)
        values[RecordKeys.maxDuration] = maxDurationMs.map(DBusValue.uint32)
        values[RecordKeys.endOnSilenceMs] = endOnSilenceMs.map(DBusValue.uint32)
        values[RecordKeys.samplingRate] = samplingRate.map(DBusValue.uint32)
        values[RecordKeys.bitsPerSample] = bitsPerSample.map(DBusValue.uint32)
        values[RecordKeys.displayText1] = displayText1.map(DBusValue.string)
        values[RecordKeys.displayText2] = displayText2.map(DBusValue.string)
        if outliveOwner { values[RecordKeys.outliveOwner] = .boolean(true) }
        metadata.add(to: &values)
        return values
    }
}

/// How a job ended.
public struct JobResult: Sendable, Equatable {
    public let resultCode: ResultCode
    /// The stored piece, empty when none was kept.
    public let pieceId: String
    /// Why it ended, in words.
    public let reason: String
    /// The piece's title.
    public let title: String?
    /// Frames the pass-thru captured, when it ran.
    public let framesCaptured: UInt64?

    /// The result a job's `Finished` signal's arguments (s, s, a{sv}) give; nil when they are not those.
    public init?(finished arguments: [DBusValue]) {
        typealias Keys = OrchestratorContract.Job.FinishedKeys
        guard arguments.count == 3, let code = arguments[0].stringValue.flatMap(ResultCode.init(rawValue:)),
              let piece = arguments[1].stringValue, let info = arguments[2].stringKeyedValue else { return nil }
        resultCode = code
        pieceId = piece
        reason = info[Keys.reason]?.stringValue ?? ""
        title = info[Keys.title]?.stringValue
        framesCaptured = info[Keys.framesCaptured]?.uint64Value
    }
}

/// A running job: its steps as they begin (`states`, an `AsyncSequence` that ends when the
/// job does), then its result; `cancel()` ends it.
public final class Job: Sendable {
    public let path: ObjectPath
    /// Each step as it begins, after `preparing`; ends when the job finishes.
    public let states: AsyncStream<JobState>
    let calls: ServiceCalls
    let finished: Task<JobResult, any Error>

    init(path: ObjectPath, calls: ServiceCalls, states: AsyncStream<JobState>, finished: Task<JobResult, any Error>) {
        self.path = path
        self.calls = calls
        self.states = states
        self.finished = finished
    }

    public var result: JobResult {
        get async throws {
            do {
                return try await finished.value
            } catch {
                throw EarshotError(error)
            }
        }
    }

    public func cancel() async throws { try await JobControl(path: path, calls: calls).cancel() }
}

/// Any job, by its object (one this client did not start, or started with `startRecording`).
public struct JobControl: Sendable {
    public let path: ObjectPath
    let calls: ServiceCalls

    /// Cancels it (its result code becomes ABORTED).
    public func cancel() async throws {
        _ = try await calls.call(path, OrchestratorContract.Job.interface, OrchestratorContract.Job.cancel)
    }
}

/// `org.earshot.Orchestrator1`.
public struct OrchestratorProxy: Sendable {
    typealias Manager = OrchestratorContract.Manager
    private(set) var calls: ServiceCalls
    let path = ObjectPath(declared: OrchestratorContract.managerPath)

    /// Calls give up after `timeout` (no reply: `org.freedesktop.DBus.Error.NoReply`).
    public init(connection: DBusConnection, timeout: Duration = DBusConnection.defaultTimeout) {
        calls = ServiceCalls(connection: connection, busName: OrchestratorContract.busName, timeout: timeout)
    }

    /// The same proxy with calls that give up after `timeout`.
    public func timing(out timeout: Duration) -> OrchestratorProxy {
        var proxy = self
        proxy.calls.timeout = timeout
        return proxy
    }

    /// Starts a job without following it (no subscription): for a caller that acts on it
    /// by its object and reads its outcome from its properties, if at all.
    public func startRecording(_ request: RecordPieceRequest) async throws -> JobControl {
        let values = request.values
        try RequestCheck.check(values, against: Manager.requestKeys)
        let job = try await calls.object(path, Manager.interface, Manager.recordPiece, [.vardict(values)])
        return JobControl(path: job, calls: calls)
    }

    /// Any job, by its object.
    public func job(at path: ObjectPath) -> JobControl { JobControl(path: path, calls: calls) }

    /// Starts a job; its steps and result come from the returned `Job`.
    public func recordPiece(_ request: RecordPieceRequest) async throws -> Job {
        typealias Members = OrchestratorContract.Job
        let values = request.values
        try RequestCheck.check(values, against: Manager.requestKeys)
        // One subscription for the jobs' PropertiesChanged and Finished keeps them in order.
        ClientReach.note(Members.interface, Members.finished.name)
        let signals: SignalSubscription
        do {
            signals = try await calls.connection.subscribe(MatchRule(sender: calls.busName, pathNamespace: path))
        } catch {
            throw EarshotError(error)
        }
        let job = try await calls.object(path, Manager.interface, Manager.recordPiece, [.vardict(values)], cleanup: signals.cancel)
        let (states, stateContinuation) = AsyncStream<JobState>.makeStream()
        let finished = Task { () throws -> JobResult in
            defer {
                signals.cancel()
                stateContinuation.finish()
            }
            var last = JobState.preparing
            for await signal in signals where signal.path == job {
                if signal.interface == Members.interface.name, signal.member == Members.finished.name {
                    guard let result = JobResult(finished: signal.body) else { continue }
                    return result
                }
                // PropertiesChanged(interface, changed, invalidated)
                guard signal.body.count >= 2, signal.body[0].stringValue == Members.interface.name,
                      let state = signal.body[1].stringKeyedValue?[Members.state]?.stringValue.map(JobState.init(reported:)),
                      state != last, state != .finished else { continue }
                last = state
                stateContinuation.yield(state)
            }
            throw EarshotError(name: DBusError.prefix + "Disconnected", message: "the bus went away before \(job) finished")
        }
        return Job(path: job, calls: calls, states: states, finished: finished)
    }

    /// Each watched service's well-known name → its owner on the bus and whether it runs.
    public func services() async throws -> [String: ServiceHealth] {
        try await read(.services)
    }
}
