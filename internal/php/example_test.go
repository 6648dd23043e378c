package php_test

import (
	"fmt"

	"github.com/laraq/laraq/internal/php"
)

func ExampleSlug() {
	fmt.Println(php.Slug("Café Crème", "_") + "_database_")
	fmt.Println(php.Slug("Café Crème", "-") + "-database-")
	// Output:
	// cafe_creme_database_
	// cafe-creme-database-
}
