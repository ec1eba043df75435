// spewpod: a development helper for kubelet-ts (not shipped). It decodes
// static pod manifests exactly as the kubelet v1.20 file source does and
// prints the spew text DeepHashObject hashes and its md5, or dumps the Go
// type layout of core.Pod and v1.Pod (field order, Go type names, JSON names).
package main

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/ioutil"
	"os"
	"reflect"
	"strings"

	"github.com/davecgh/go-spew/spew"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
)

type field struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	JSON     string `json:"json,omitempty"`
	Embedded bool   `json:"embedded,omitempty"`
}

type typeInfo struct {
	Kind   string  `json:"kind"`
	Elem   string  `json:"elem,omitempty"`
	Key    string  `json:"key,omitempty"`
	Fields []field `json:"fields,omitempty"`
}

func walk(t reflect.Type, out map[string]typeInfo) {
	name := t.String()
	if _, ok := out[name]; ok {
		return
	}
	ti := typeInfo{Kind: t.Kind().String()}
	out[name] = ti
	switch t.Kind() {
	case reflect.Ptr, reflect.Slice, reflect.Array:
		ti.Elem = t.Elem().String()
		walk(t.Elem(), out)
	case reflect.Map:
		ti.Key = t.Key().String()
		ti.Elem = t.Elem().String()
		walk(t.Key(), out)
		walk(t.Elem(), out)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := strings.Split(f.Tag.Get("json"), ",")[0]
			ti.Fields = append(ti.Fields, field{Name: f.Name, Type: f.Type.String(), JSON: tag, Embedded: f.Anonymous})
			walk(f.Type, out)
		}
	}
	out[name] = ti
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "schema" {
		out := map[string]typeInfo{}
		walk(reflect.TypeOf(api.Pod{}), out)
		walk(reflect.TypeOf(v1.Pod{}), out)
		b, _ := json.MarshalIndent(out, "", " ")
		os.Stdout.Write(b)
		return
	}
	printer := spew.ConfigState{Indent: " ", SortKeys: true, DisableMethods: true, SpewKeys: true}
	for _, path := range os.Args[1:] {
		data, err := ioutil.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		js, err := utilyaml.ToJSON(data)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		obj, err := runtime.Decode(legacyscheme.Codecs.UniversalDecoder(), js)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		pod := obj.(*api.Pod)
		text := printer.Sprintf("%#v", pod)
		sum := md5.Sum([]byte(text))
		fmt.Printf("%s\t%s\n%s\n", path, hex.EncodeToString(sum[:]), text)
	}
}
