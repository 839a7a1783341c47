import Foundation

/// The ffmpeg, ffprobe and sha256sum command-line tools (Debian packages).
enum ExternalTools {
    struct Output {
        let status: Int32
        let standardOutput: String
        let standardError: String
    }

    /// Runs `/usr/bin/<tool>` with `arguments` (stdin from /dev/null, stdout and stderr to
    /// temporary files) and waits for it. posix_spawn and waitpid rather than Foundation's
    /// Process, whose exit wait polls a run loop.
    static func run(_ tool: String, _ arguments: [String]) throws -> Output {
        let outputPath = try temporaryPath()
        let errorPath = try temporaryPath()
        defer {
            unlink(outputPath)
            unlink(errorPath)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_TRUNC, 0)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_TRUNC, 0)

        let executable = "/usr/bin/" + tool
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw ToolFailure(message: "posix_spawn \(executable): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw ToolFailure(message: "waitpid: \(String(cString: strerror(errno)))") }
        }
        // WIFEXITED / WEXITSTATUS, which Swift does not import.
        let exitStatus: Int32 = status & 0x7F == 0 ? (status >> 8) & 0xFF : -1
        let standardOutput = FileManager.default.contents(atPath: outputPath) ?? Data()
        let standardError = FileManager.default.contents(atPath: errorPath) ?? Data()
        return Output(status: exitStatus,
                      standardOutput: String(decoding: standardOutput, as: UTF8.self),
                      standardError: String(decoding: standardError, as: UTF8.self))
    }

    private static func temporaryPath() throws -> String {
        var template = Array("/tmp/earshot-media-tool.XXXXXX".utf8CString)
        let descriptor = mkstemp(&template)
        guard descriptor >= 0 else { throw ToolFailure(message: "mkstemp: \(String(cString: strerror(errno)))") }
        close(descriptor)
        return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// Runs ffmpeg quietly, overwriting outputs; fails the caller if ffmpeg fails.
    static func ffmpeg(_ arguments: [String]) throws {
        let result = try run("ffmpeg", ["-nostdin", "-v", "error", "-y"] + arguments)
        guard result.status == 0 else { throw ToolFailure(message: "ffmpeg \(arguments): \(result.standardError)") }
    }

    /// What ffprobe says about a file's container and first stream.
    struct Probe: Decodable {
        struct Stream: Decodable {
            let codec_name: String
            let sample_rate: String
            let channels: Int
        }
        struct Format: Decodable {
            let format_name: String
            let duration: String
        }
        let streams: [Stream]
        let format: Format

        var duration: Double { Double(format.duration) ?? -1 }
    }

    static func probe(_ path: String) throws -> Probe {
        let result = try run("ffprobe", ["-v", "error", "-show_entries",
                                         "format=format_name,duration:stream=codec_name,sample_rate,channels",
                                         "-of", "json", path])
        guard result.status == 0 else { throw ToolFailure(message: "ffprobe \(path): \(result.standardError)") }
        return try JSONDecoder().decode(Probe.self, from: Data(result.standardOutput.utf8))
    }

    /// sha256sum's digest of a file.
    static func sha256sum(_ path: String) throws -> String {
        let result = try run("sha256sum", ["-b", path])
        guard result.status == 0 else { throw ToolFailure(message: "sha256sum \(path): \(result.standardError)") }
        return String(result.standardOutput.prefix(64))
    }

    struct ToolFailure: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }
}
