#if canImport(Glibc)
import Glibc
#endif

/// Who runs this process, for records that name the operator (the audit log's `cli` actor).
public enum SystemUser {
    /// The login name of the effective user (`getpwuid_r`), else `$USER`, else `uid <n>`: never empty.
    public static func name(environment: [String: String]) -> String {
        let uid = geteuid()
        var buffer = [CChar](repeating: 0, count: 4096)
        // pw_name points into the buffer: it is read inside the closure that owns it.
        let name: String? = buffer.withUnsafeMutableBufferPointer { storage in
            var entry = passwd()
            var found: UnsafeMutablePointer<passwd>? = nil
            guard let base = storage.baseAddress, getpwuid_r(uid, &entry, base, storage.count, &found) == 0, found != nil,
                  let pointer = entry.pw_name
            else { return nil }
            return String(cString: pointer)
        }
        if let name, !name.isEmpty { return name }
        if let user = environment["USER"], !user.isEmpty { return user }
        return "uid \(uid)"
    }
}
