import Foundation
import Glibc

/// A cabin on a `PipeWireTestSystem`: what the speakers play reaches the microphone, later,
/// as it does through a car's air; and the speakers' monitor as a source of its own, the
/// echo reference a head unit gives its capture service.
extension PipeWireTestSystem {
    /// What the speakers play (their monitor, mixed to mono) goes on into the virtual
    /// microphone `afterSeconds` later, beside whatever else is spoken into it (a
    /// `pw-loopback` whose playback is linked to `mic` by hand: WirePlumber links playback
    /// streams to sinks only, and would play it back into the speakers). Returns once linked.
    @discardableResult
    public func hearSpeakersAtMicrophone(afterSeconds delay: Double) async throws -> ChildProcess {
        let name = "earshot-test-cabin"
        let loopback = try startLoopback([
            "-d", String(delay),
            "--capture-props", "{ stream.capture.sink=true target.object=speakers node.name=\(name)-air }",
            "--playback-props", "{ node.name=\(name) node.autoconnect=false }",
        ], log: "pw-loopback-cabin.log")
        let port = try await firstOutputPort(of: name, while: loopback, log: "pw-loopback-cabin.log")
        try await tool(["pw-link", port, "mic:input_MONO"])
        return loopback
    }

    /// The speakers' monitor (mono) as a source node `name`, which ALSA's `pipewire` PCM
    /// reaches with `capture_node`. Returns once its port is there.
    @discardableResult
    public func speakersMonitorSource(named name: String) async throws -> ChildProcess {
        let loopback = try startLoopback([
            "--capture-props", "{ stream.capture.sink=true target.object=speakers node.name=\(name)-monitor }",
            "--playback-props", "{ media.class=Audio/Source node.name=\(name) }",
        ], log: "pw-loopback-\(name).log")
        _ = try await firstOutputPort(of: name, while: loopback, log: "pw-loopback-\(name).log")
        return loopback
    }

    /// `samples` (-1...1, at `rate`, the same on every channel) as a WAV file `name`.
    public func soundFile(_ samples: [Float], rate: Int, channels: Int = 2, name: String) throws -> URL {
        let url = directory.appendingPathComponent(name + ".wav")
        var pcm = [Int16](repeating: 0, count: samples.count * channels)
        for (frame, value) in samples.enumerated() {
            let sample = Int16(clamping: Int((value * 32767).rounded()))
            for channel in 0..<channels { pcm[frame * channels + channel] = sample }
        }
        try PCMWaveFile.data(samples: pcm, rate: UInt32(rate), channels: UInt16(channels)).write(to: url)
        return url
    }

    private func startLoopback(_ arguments: [String], log: String) throws -> ChildProcess {
        let loopback = try ChildProcess(["/usr/bin/pw-loopback", "-c", "1", "-m", "[ MONO ]"] + arguments,
                                        environment: daemonEnvironment, logPath: directory.appendingPathComponent(log).path)
        processes.withLock { $0.append(loopback) }
        return loopback
    }

    /// The first output port of the node `name`, once there (at most 10 s, while `process`
    /// runs, which logs to `log`).
    func firstOutputPort(of name: String, while process: ChildProcess, log: String) async throws -> String {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            let ports = try await tool(["pw-link", "--output"]).split(separator: "\n").map(String.init).filter { $0.hasPrefix(name + ":") }
            if let port = ports.first { return port }
            guard process.isRunning, ContinuousClock.now < deadline else {
                throw HarnessError("the node \(name) never showed an output port\(process.isRunning ? "" : " (it exited)"): \(self.log(log))")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}
