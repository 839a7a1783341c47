import Foundation
import Glibc

/// Local users for tests that need several identities on one machine (the test runs as
/// root): system users without a home or a login shell, created when missing and reused
/// when present, and a command prefix that runs a program as one of them.
public enum TestUser {
    /// A user's ids.
    public struct Identity: Sendable, Equatable {
        public let name: String
        public let uid: uid_t
        public let gid: gid_t
    }

    /// Creates the system user `name` unless it exists, adds it to those of `groups` it is
    /// not in, and takes it out of those of `excluded` it is in (leaving its other groups
    /// alone). Needs root; not safe to call for the same user from two tasks at once
    /// (`useradd`, `usermod` and `gpasswd` lock the user database).
    ///
    /// `ordinary`: a user with an ordinary uid (from UID_MIN), as a person's account is,
    /// rather than a system user's; one that exists with a system uid is made again.
    @discardableResult
    public static func ensure(_ name: String, in groups: [String], notIn excluded: [String] = [],
                              ordinary: Bool = false) async throws -> Identity {
        if ordinary, let existing = lookup(name), existing.uid < 1000 {
            _ = try await ToolRun.run(["/usr/sbin/userdel", name])
        }
        if lookup(name) == nil {
            _ = try await ToolRun.run(["/usr/sbin/useradd"] + (ordinary ? [] : ["--system"])
                                      + ["--no-create-home", "--shell", "/usr/sbin/nologin", name])
        }
        let current = supplementaryGroups(of: name)
        let missing = groups.filter { !current.contains($0) }
        if !missing.isEmpty {
            _ = try await ToolRun.run(["/usr/sbin/usermod", "--append", "--groups", missing.joined(separator: ","), name])
        }
        for group in excluded where current.contains(group) {
            _ = try await ToolRun.run(["/usr/bin/gpasswd", "--delete", name, group])
        }
        guard let identity = lookup(name) else { throw HarnessError("user \(name) does not exist after useradd") }
        return identity
    }

    /// The user `name`'s ids, or nil when there is no such user.
    public static func lookup(_ name: String) -> Identity? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getpwnam_r(name, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return Identity(name: name, uid: entry.pw_uid, gid: entry.pw_gid)
    }

    /// The names of the groups that list `user` as a member (not its primary group).
    public static func supplementaryGroups(of user: String) -> [String] {
        guard let text = try? String(contentsOfFile: "/etc/group", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line -> String? in
            let fields = line.split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count >= 4 else { return nil }
            return fields[3].split(separator: ",").contains(Substring(user)) ? String(fields[0]) : nil
        }
    }

    /// A prefix for `ChildProcess` and `ServiceProcess` arguments that runs the rest as
    /// `user`, with its primary group and its supplementary groups. Changing credentials
    /// clears the parent-death signal, so the prefix sets it again: the program still dies
    /// with the process that started it.
    public static func commandPrefix(_ user: String) throws -> [String] {
        guard let identity = lookup(user) else { throw HarnessError("no user \(user)") }
        return ["/usr/bin/setpriv", "--reuid=\(identity.uid)", "--regid=\(identity.gid)", "--init-groups",
                "--pdeathsig", "KILL", "--"]
    }
}
