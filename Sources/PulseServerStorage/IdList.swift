import PulseCore

/// A list of ids as one JSON array, so a query takes any number of them as a single parameter
/// (SQLite's `json_each`, PostgreSQL's `jsonb_array_elements_text`) and stays one prepared statement.
enum IdList {
    static func json(_ ids: [String]) -> String {
        String(decoding: JSONValue.array(ids.map { .string($0) }).canonicalBytes, as: UTF8.self)
    }
}
