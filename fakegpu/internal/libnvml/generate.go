package libnvml

//go:generate sh -c "go tool cgo -godefs types_godefs.go | gofmt > ztypes.go && rm -rf _obj"
