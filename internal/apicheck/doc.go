// Package apicheck records the public API of the nvgo library and fails the
// tests when it changes unannounced.
//
// The exported surface of every package in Packages is rendered as sorted
// lines, one per declaration or member, and compared with its recorded copy
// in api/<name>.txt at the repository root:
//
//	const FieldsAll Fields = 524287
//	field Snapshot.Devices []DeviceSnapshot `json:"devices"`
//	func Open(...Option) (*Library, error)
//	method (*Device).MemoryUsed() Value[Bytes]
//	type Device struct (has unexported fields)
//
// A line holds what a caller compiles against: types and signatures,
// constant values, struct tags (JSON tags are API), interface method sets,
// and the fields and methods promoted through unexported embedded types
// (marked "(promoted)"). Members promoted through an embedded exported type
// are left to that type's record: the "(embedded)" field line names it. Doc
// comments and parameter names are left out, so editing either is not an API
// change.
//
// To record an intended change, name every identifier whose line was added,
// removed or changed in backticks (`Device.MemoryTemperature`,
// `DeviceMetric`) under "## Unreleased" in CHANGELOG.md, and run
//
//	go test ./internal/apicheck -update
//
// which refuses, listing them, while any is unnamed. `Snapshot` covers the
// members of a type whose own line changed (it came or went); `nvgo.Open`
// and `(*Device).MemoryUsed()` are accepted spellings. Recording a package
// for the first time needs no names.
//
// # Why export data
//
// The surface is read from the compiler's export data, which
// `go list -export` builds (with cgo on, as CI builds the library) and
// go/importer reads, all from the standard library: the library module takes
// no x/tools or x/exp dependency. The compiler has already resolved modules,
// build tags and the cgo files of the root package (which import go-nvml), so
// the record is exactly what a caller's compiler sees, and a warm build cache
// makes the check take a fraction of a second. The alternatives were weaker:
// go/importer's "source" mode type-checks every dependency, the standard
// library included, from source on each run; filtering `go doc -all` text
// cannot see promoted methods nor the type of an iota constant, and breaks
// on the next change of go doc's layout.
//
// The record is of a cgo build on Linux; the library's files for other
// systems declare nothing exported.
package apicheck
