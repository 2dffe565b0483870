"""Planning a SELECT that searches: knn lifting, MATCH, hybrid fusion, highlight and passage calls."""
