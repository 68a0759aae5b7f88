package main

import (
	"strings"
	"testing"
)

func TestNormaliseSetsAsideAssetHashesOnly(t *testing.T) {
	h1, h2 := strings.Repeat("a", 64), strings.Repeat("0", 63)+"f"
	a := `{"Resources":{"Fn":{"Properties":{"Code":{"S3Key":"` + h1 + `.zip"},"Memory":512}}},"Metadata":{"asset.` + h1 + `":1}}`
	b := `{"Metadata":{"asset.` + h2 + `":1},"Resources":{"Fn":{"Properties":{"Memory":512,"Code":{"S3Key":"` + h2 + `.zip"}}}}}`
	na, err := normalise([]byte(a))
	if err != nil {
		t.Fatal(err)
	}
	nb, err := normalise([]byte(b))
	if err != nil {
		t.Fatal(err)
	}
	if string(na) != string(nb) || strings.Contains(string(na), h1) || !strings.Contains(string(na), "<hash>.zip") {
		t.Fatalf("normalised:\n%s\n%s", na, nb)
	}
	c := strings.Replace(b, "512", "1024", 1)
	if nc, _ := normalise([]byte(c)); string(nc) == string(na) {
		t.Fatal("a real difference was normalised away")
	}
	if _, err := normalise([]byte("{")); err == nil {
		t.Fatal("a broken template was accepted")
	}
}
