//go:build !cgo

package cudaprobe

const haveCGO = false

func probeDriver() reply {
	return reply{Err: &replyErr{Kind: kindNoCGO}}
}
