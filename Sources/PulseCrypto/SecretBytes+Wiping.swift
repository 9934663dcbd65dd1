import COpenSSL

extension SecretBytes {
    /// Moves `bytes` into a `SecretBytes` and overwrites the array's buffer with zeros
    /// (`OPENSSL_cleanse`), for key material a C call or a decoder handed back as an array.
    /// Copies the runtime made of the array earlier are out of reach; take ownership early.
    public convenience init(wiping bytes: inout [UInt8]) {
        self.init(bytes)
        SecretBytes.wipe(&bytes)
    }

    /// Overwrites `bytes` with zeros in place, in a way the compiler cannot drop.
    public static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress, buffer.count > 0 { OPENSSL_cleanse(base, buffer.count) }
        }
    }
}
