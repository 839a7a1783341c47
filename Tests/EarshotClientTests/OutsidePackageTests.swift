import EarshotTestHarness
import Foundation
import Testing

/// EarshotClient used the way an application uses it: a package of its own that depends on
/// Earshot by git URL and version tag, on every library product the manifest declares.
/// SwiftPM refuses, in a package depended on by version, any product whose targets carry
/// unsafe build flags; this is what proves the library products carry none (a product
/// added later is depended on here without a word in this file).
@Suite(.serialized) struct OutsidePackageTests {
    static let root = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../..").standardized

    static func git(_ arguments: [String], in directory: URL) async throws {
        var environment = ProcessInfo.processInfo.environment
        for (key, value) in ["GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.invalid",
                             "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.invalid"] { environment[key] = value }
        _ = try await ToolRun.run(["/usr/bin/git", "-C", directory.path] + arguments, environment: environment)
    }

    /// A bare repository holding this working tree (committed or not) as one commit, tagged
    /// `1.0.0`.
    static func release(in directory: URL) async throws -> URL {
        let tree = directory.appending(path: "earshot")
        let listed = try await ToolRun.run(["/usr/bin/git", "-C", root.path, "ls-files", "--cached", "--others", "--exclude-standard", "-z"])
        for file in listed.split(separator: "\0").map(String.init) {
            let source = root.appending(path: file)
            guard FileManager.default.fileExists(atPath: source.path) else { continue }  // deleted, not yet committed
            let copy = tree.appending(path: file)
            try FileManager.default.createDirectory(at: copy.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: source, to: copy)
        }
        try await git(["init", "-q", "-b", "main"], in: tree)
        try await git(["add", "-A"], in: tree)
        try await git(["commit", "-q", "-m", "release"], in: tree)
        try await git(["tag", "1.0.0"], in: tree)
        let bare = directory.appending(path: "earshot.git")
        try await git(["clone", "-q", "--bare", tree.path, bare.path], in: directory)
        return bare
    }

    /// The names of the library products of the manifest in `tree`, as SwiftPM reads them.
    /// (Read from the released copy: SwiftPM locks the build directory of the tree whose
    /// tests are running.)
    static func libraryProducts(of tree: URL) async throws -> [String] {
        let dumped = try await ToolRun.run(["/usr/bin/env", "swift", "package", "dump-package", "--package-path", tree.path],
                                           timeout: .seconds(300))
        struct Manifest: Decodable {
            struct Product: Decodable { let name: String; let type: [String: AnyDecodable] }
            let products: [Product]
        }
        struct AnyDecodable: Decodable { init(from decoder: any Decoder) throws {} }
        let manifest = try JSONDecoder().decode(Manifest.self, from: Data(dumped.utf8))
        return manifest.products.filter { $0.type.keys.contains("library") }.map(\.name).sorted()
    }

    @Test func anApplicationDependsOnEveryLibraryProductByVersionAndCallsAService() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "earshot-outside-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let bare = try await Self.release(in: directory)
        let products = try await Self.libraryProducts(of: directory.appending(path: "earshot"))
        // The three the application below imports; any other is depended on all the same.
        try #require(Set(products).isSuperset(of: ["EarshotClient", "EarshotDBus", "EarshotService"]), "\(products)")

        let app = directory.appending(path: "take-app")
        try FileManager.default.createDirectory(at: app.appending(path: "Sources/take-app"), withIntermediateDirectories: true)
        try """
            // swift-tools-version:6.1
            import PackageDescription

            let package = Package(
                name: "take-app",
                dependencies: [.package(url: "\(bare.absoluteURL.absoluteString)", from: "1.0.0")],
                targets: [.executableTarget(name: "take-app", dependencies: [
                    \(products.map { ".product(name: \"\($0)\", package: \"earshot\")" }.joined(separator: ", "))
                ])]
            )

            """.write(to: app.appending(path: "Package.swift"), atomically: true, encoding: .utf8)
        try """
            import EarshotClient
            import EarshotDBus
            import EarshotService

            // Compiled, not run: each object's properties are read on it, and the other
            // library products are usable (an application's own service on the binding).
            let _: @Sendable (Job, PassThru, PresentedAlert) async throws -> Void = { job, passThru, alert in
                _ = try await job.read(.pieceId)
                _ = try await job.observe(.state)
                _ = try await passThru.read(.framesCaptured)
                _ = try await alert.read(.state)
            }
            let _ = DBusInterface("org.example.TakeApp", methods: [])
            let _ = ServiceMain.exitStartupFailed

            let earshot = try Earshot.connect()
            let take = AudioPassThruRequest(samplingRate: 16000, bitsPerSample: 16, maxDurationMs: 300)
            let result = try await earshot.capture.perform(take) { _ in }
            print("\\(result.resultCode.rawValue) \\(result.framesCaptured)")
            earshot.close()

            """.write(to: app.appending(path: "Sources/take-app/main.swift"), atomically: true, encoding: .utf8)
        // The dependencies at the versions Earshot itself is tested with.
        try FileManager.default.copyItem(at: Self.root.appending(path: "Package.resolved"), to: app.appending(path: "Package.resolved"))

        // The toolchain running these tests, found on PATH as the test command finds it.
        let built = try await ToolRun.run(["/usr/bin/env", "swift", "build", "--package-path", app.path], timeout: .seconds(900))
        #expect(built.contains("Build complete"), "\(built.suffix(2000))")

        try await ServiceStack.with(["earshot-capture"]) { stack in
            var environment = ProcessInfo.processInfo.environment
            environment["DBUS_SESSION_BUS_ADDRESS"] = stack.bus.address
            let printed = try await ToolRun.run([app.appending(path: ".build/debug/take-app").path], environment: environment,
                                                timeout: .seconds(30))
            #expect(printed == "SUCCESS 4800\n")
        }
    }
}
