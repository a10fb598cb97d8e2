module github.com/nvgo/nvgo/examples

// The tools (status, select, atopgpud, usagelog, monitor, exporter) are a
// module of their own, so that a program importing the library is not
// forced onto their dependencies (a TUI, Prometheus) nor their Go release.
go 1.26

require (
	github.com/NVIDIA/go-nvml v0.13.3-1
	github.com/nvgo/nvgo v0.0.0
	golang.org/x/sys v0.20.0
)

require (
	github.com/go-ole/go-ole v1.2.6 // indirect
	github.com/jellydator/ttlcache/v3 v3.4.1 // indirect
	github.com/lufia/plan9stats v0.0.0-20211012122336-39d0f177ccd0 // indirect
	github.com/power-devops/perfstat v0.0.0-20210106213030-5aafc221ea8c // indirect
	github.com/shirou/gopsutil/v3 v3.24.5 // indirect
	github.com/shoenig/go-m1cpu v0.1.6 // indirect
	github.com/tklauser/go-sysconf v0.3.12 // indirect
	github.com/tklauser/numcpus v0.6.1 // indirect
	github.com/yusufpapurcu/wmi v1.2.4 // indirect
	golang.org/x/sync v0.16.0 // indirect
)

replace github.com/nvgo/nvgo => ../
